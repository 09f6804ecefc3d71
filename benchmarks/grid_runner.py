"""The grid runner: trainings per victim in a grid of passive attacks, and 2 local workers vs 1.

    python benchmarks/grid_runner.py --data-root ../shared/data --dataset mnist --timing-profile cpu
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import bench.run.training as train_module
from bench.run.cell import Cell
from bench.run.cell_runner import RunContext
from bench.run.executors import LocalExecutor, SerialExecutor
from bench.run.runner import run_grid
from bench.run.store import ResultStore


def cells(dataset: str, profile: str, attacks: tuple[str, ...], seeds: range) -> list[Cell]:
    base = dict(dataset=dataset, victim="mnistnet", cut="split-2", profile=profile)
    defenses = [("raw", None), ("lightsplit-f", 8.0), ("topk", 8.0), ("learned-1x1", 8.0)]
    return [Cell(defense=d, defense_knobs={"cr": cr}, seed=s, attack=a, **base) for d, cr in defenses for s in seeds for a in attacks]


def count_trainings(grid: list[Cell], data_root: Path, work: Path) -> tuple[int, int]:
    """Real trainings (cache misses) during one serial run of the grid, and distinct victims."""
    counted = []
    original = train_module.SplitTrainer.train_epoch

    def counting(self, loaders):
        if self.epoch == 0:
            counted.append(1)
        return original(self, loaders)

    train_module.SplitTrainer.train_epoch = counting
    try:
        ctx = RunContext(data_root=data_root, cache_dir=work / "checkpoints")
        run_grid(grid, store=ResultStore(work / "count"), ctx=ctx)
    finally:
        train_module.SplitTrainer.train_epoch = original
    return len(counted), len({c.victim_key for c in grid})


def timed(grid: list[Cell], out: Path, data_root: Path, executor) -> float:
    start = time.perf_counter()
    summary = run_grid(grid, store=ResultStore(out), ctx=RunContext(data_root=data_root), executor=executor)
    assert not summary.failed, summary.failed
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default="smoke")
    ap.add_argument("--dataset", default="digits")
    ap.add_argument("--data-root", default=".")
    ap.add_argument("--timing-profile", default="cpu", help="Profile of the 1-vs-2-worker timing (cells must be large).")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        grid = cells(args.dataset, args.profile, ("decoder-ref", "decoder", "unsplit"), range(2))
        trainings, victims = count_trainings(grid, Path(args.data_root), root)
        print(f"{len(grid)} passive attack cells on {victims} victims: {trainings} trainings")
        utility = cells(args.dataset, args.timing_profile, ("none",), range(4))
        data_root = Path(args.data_root)
        one = timed(utility, root / "one", data_root, SerialExecutor())
        two = timed(utility, root / "two", data_root, LocalExecutor(jobs=2))
        print(f"{len(utility)} victim trainings: 1 worker {one:.1f} s, 2 workers {two:.1f} s, speed-up {one / two:.2f}×")


if __name__ == "__main__":
    main()
