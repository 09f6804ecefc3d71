"""A/B of whole attack cells: an old tree (e.g. ``git worktree add /tmp/old HEAD~1``) against this one.

One cell per process, the two trees alternating, MnistNet split-2 raw and lightsplit-f CR 8, cpu profile
at the given budget, seed 0, one torch thread; prints the median attacker seconds (plus the victim's own
steps for SDAR and FSHA, whose runs include them) and the ratio old/new.

    python benchmarks/attack_ab.py --base /tmp/old sdar,fsha 0.25 2
"""
import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--base", required=True, help="the old tree")
parser.add_argument("attacks")
parser.add_argument("budget")
parser.add_argument("repeats", type=int)
args = parser.parse_args()
attacks, budget, reps = args.attacks, args.budget, args.repeats
here = str(Path(__file__).resolve().parents[1])
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
cell = Cell(dataset=ds, victim="mnistnet", cut="split-2", defense=defense, defense_knobs=knobs, profile="cpu",
            seed=0, attack=attack, attack_knobs={"budget": float(budget)})
r = run_cell(cell, data, Path("/tmp/attack_ab/ckpt-" + tag))
print(json.dumps(r))
'''
for attack in attacks.split(","):
    for defense in ("raw", "lightsplit-f"):
        res = {"base": [], "new": []}
        for _ in range(reps):
            for tag, cwd in (("base", args.base), ("new", here)):
                out = subprocess.run([sys.executable, "-c", code, attack, defense, budget, tag], cwd=cwd, capture_output=True, text=True)
                lines = [text for text in out.stdout.splitlines() if text.startswith("{")]
                if not lines:
                    raise SystemExit(out.stderr[-2000:])
                r = json.loads(lines[-1])
                res[tag].append(r["attacker"] + (r["victim"] if attack in ("sdar", "fsha") else 0))
        b, n = statistics.median(res["base"]), statistics.median(res["new"])
        print(f"{attack:8s} {defense:13s} base {b:6.1f}s new {n:6.1f}s  speed-up {b/n:.2f}x  {res}", flush=True)
