"""Rerunning a grid whose cells are all stored: wall time of the whole command, beside ``import torch``.

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
BENCH = [sys.executable, "-c", "from bench.cli import main; main()", "run", "--quiet"]
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
        rerun, torch_import = [], []
        for _ in range(args.repeats):
            rerun.append(timed([*BENCH, *grid, "--out", str(out)]))
            torch_import.append(timed([sys.executable, "-c", "import torch"]))
    r, t = statistics.median(rerun), statistics.median(torch_import)
    print(f"stored grid of {stored} cells, median of {args.repeats}: `bench run` {r:.2f} s (target <= 5 s), "
          f"`import torch` {t:.2f} s, rerun / import torch = {r / t:.2f}")
    print("  runs: " + ", ".join(f"{x:.2f}" for x in rerun) + " s; import torch: " + ", ".join(f"{x:.2f}" for x in torch_import) + " s")


if __name__ == "__main__":
    main()
