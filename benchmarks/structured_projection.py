"""Dense vs structured (SRHT) LightSplit projection: accuracy and reference-decoder leakage.

Each defense trains the same victim on the offline MNIST split with the same seed, then the
white-box reference decoder (``decoder-ref``, cpu budget) reconstructs the attacked members from the
server's lift-back. The sizes are reduced with flags so ResNet-18 fits a CPU session; the cpu-profile
MnistNet comparison is a stored grid (``results/issue6-structured-projection``).

    python benchmarks/structured_projection.py --victim resnet18 --cut l2h --members 1200 --epochs 2
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench.data import DATASETS
from bench.data.splits import carve
from bench.profiles import Profile
from bench.run.attack_cell import run_attack_cell
from bench.run.cell import Cell


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-root", default="../shared/data")
    ap.add_argument("--victim", default="resnet18")
    ap.add_argument("--cut", default="l2h")
    ap.add_argument("--cr", type=float, default=8.0)
    ap.add_argument("--members", type=int, default=1200)
    ap.add_argument("--targets", type=int, default=200, help="Attacked members; the decoder trains on the rest.")
    ap.add_argument("--test", type=int, default=1000)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--defenses", default="raw,lightsplit-f,lightsplit-f-srht")
    args = ap.parse_args()
    profile = Profile(name="structured-check", members=args.members, nonmembers=200, test=args.test,
                      epochs=args.epochs, batch_size=64, targets=args.targets)
    data = carve(DATASETS.get("mnist")(Path(args.data_root), download=False), profile)
    print(f"{args.victim} {args.cut} on MNIST, CR {args.cr:g}: {args.members} members ({args.targets} attacked), "
          f"{args.epochs} epochs, decoder-ref at its cpu budget")
    print(f"  {'defense':<18} {'seed':>4} {'accuracy':>9} {'ssim':>7} {'masked_mse':>11} {'wall_s':>7}")
    results: dict[str, list[dict]] = {}
    for defense in args.defenses.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            cell = Cell(dataset="mnist", victim=args.victim, cut=args.cut, defense=defense, profile="cpu",
                        seed=seed, defense_knobs={} if defense == "raw" else {"cr": args.cr}, attack="decoder-ref")
            start = time.perf_counter()
            metrics, _ = run_attack_cell(cell, data=data, profile=profile, cache_dir=None, artifacts_dir=None)
            wall = time.perf_counter() - start
            results.setdefault(defense, []).append(metrics)
            print(f"  {defense:<18} {seed:>4} {metrics['accuracy']:>9.4f} {metrics['ssim']:>7.3f} "
                  f"{metrics['masked_mse']:>11.4f} {wall:>7.1f}", flush=True)
    mean = lambda d, k: sum(m[k] for m in results[d]) / len(results[d])  # noqa: E731
    if {"lightsplit-f", "lightsplit-f-srht"} <= results.keys():
        for key in ("accuracy", "ssim", "masked_mse"):
            print(f"  {key}: srht / dense = {mean('lightsplit-f-srht', key) / mean('lightsplit-f', key):.3f}")


if __name__ == "__main__":
    main()
