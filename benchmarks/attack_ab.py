# A/B: attacker wall time of base (HEAD worktree) vs current code, alternating processes.
import subprocess, sys, json, statistics
attacks, budget, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
code = r'''
import sys, json, torch
sys.path.insert(0, "benchmarks")
from profile_attacks import run_cell
from bench.data import DATASETS
from bench.data.autodetect import resolve_datasets
from bench.data.splits import carve
from bench.profiles import get_profile
from bench.run.cell import Cell
from pathlib import Path
torch.set_num_threads(1)
root, (ds,) = resolve_datasets("auto", None)
data = carve(DATASETS.get(ds)(root), get_profile("cpu"))
attack, defense, budget, tag = sys.argv[1:5]
knobs = {} if defense == "raw" else {"cr": 8.0}
cell = Cell(dataset=ds, victim="mnistnet", cut="split-2", defense=defense, defense_knobs=knobs, profile="cpu", seed=0, attack=attack, attack_knobs={"budget": float(budget)})
r = run_cell(cell, data, Path("/tmp/ab/ckpt-" + tag))
print(json.dumps(r))
'''
for attack in attacks.split(","):
    for defense in ("raw", "lightsplit-f"):
        res = {"base": [], "new": []}
        for _ in range(reps):
            for tag, cwd in (("base", "/tmp/ab/base"), ("new", "/work/main")):
                out = subprocess.run([sys.executable, "-c", code, attack, defense, budget, tag], cwd=cwd, capture_output=True, text=True)
                line = [l for l in out.stdout.splitlines() if l.startswith("{")]
                if not line:
                    print(out.stderr[-2000:]); raise SystemExit(1)
                r = json.loads(line[-1]); res[tag].append(r["attacker"] + (r["victim"] if attack in ("sdar", "fsha") else 0))
        b, n = statistics.median(res["base"]), statistics.median(res["new"])
        print(f"{attack:8s} {defense:13s} base {b:6.1f}s new {n:6.1f}s  speed-up {b/n:.2f}x  {res}", flush=True)
