"""Start-up: rerunning a grid whose cells are all stored, ``bench list`` and ``bench report`` on the
stored grid, each beside a bare ``python -c "import torch"`` timed in the same run (interleaved).

A stored grid is rebuilt here (smoke profile on sklearn digits, so it needs no data root), then
``bench run`` is repeated on it, interleaved with a bare ``python -c "import torch"``, so the two
times come from the same machine state. With ``--results DIR`` the rerun is timed on an existing
results folder instead, with the grid given after ``--``.

    python benchmarks/stored_rerun.py [--repeats 3]
    python benchmarks/stored_rerun.py --results results/issue3-attacks -- --data-root ../shared/data \
        --dataset mnist --seeds 0,1,2 --profile cpu --attack decoder-ref \
        --defense raw,lightsplit-f,topk,learned-1x1 --cr 8,16,32
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from bench.cli import main; main()"]
BENCH = [*CLI, "run", "--quiet"]
SMOKE_GRID = ["--dataset", "digits", "--profile", "smoke", "--seeds", "0,1,2", "--defense", "raw,lightsplit-f,topk",
              "--cr", "8,16", "--attack", "none,decoder-ref"]


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--results", type=Path, default=None, help="Time the rerun on a copy of this results folder.")
    ap.add_argument("grid", nargs="*", help="The grid's `bench run` options (with --results).")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results"
        if args.results is not None:
            shutil.copytree(args.results / "cells", out / "cells")
            grid = args.grid
        else:
            grid = SMOKE_GRID
            subprocess.run([*BENCH, *grid, "--out", str(out)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        stored = len(list((out / "cells").glob("*.json")))
        subprocess.run([*BENCH, *grid, "--out", str(out)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        commands = {
            "import torch": [sys.executable, "-c", "import torch"],
            "bench run (stored)": [*BENCH, *grid, "--out", str(out)],
            "bench list": [*CLI, "list"],
            "bench report": [*CLI, "report", "--results", str(out), "--table", "II,III"],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeats):
            for name, command in commands.items():
                times[name].append(timed(command))
    base = statistics.median(times["import torch"])
    print(f"stored grid of {stored} cells, median of {args.repeats} interleaved runs; `import torch` {base:.2f} s")
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"  {name:<20} {median:5.2f} s = {median / base:.2f} × import torch   (runs: "
              + ", ".join(f"{x:.2f}" for x in runs) + ")")


if __name__ == "__main__":
    main()
