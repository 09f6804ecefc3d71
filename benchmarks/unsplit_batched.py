"""Batched UnSplit vs its per-image mode at equal iterations: time per image and reconstruction parity.

Both modes run the same schedule on a trained MnistNet split-2 raw victim (cpu profile); the
per-image mode solves the first ``--per-image`` targets one at a time, the batched mode solves
``--batch`` targets at once (those first ones included, with the same clone initialisations).

    python benchmarks/unsplit_batched.py --data-root ../shared/data [--batch 16,64,256 --outer 10]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from attacks.unsplit import UnSplit, UnSplitConfig
from bench.data import DATASETS
from bench.data.splits import carve
from bench.metrics.image import masked_mse
from bench.profiles import get_profile
from bench.run.attacker_views import build_view
from bench.run.cell import Cell
from bench.run.training import train_victim


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-root", default="../shared/data")
    ap.add_argument("--batch", default="16,64,256", help="Targets solved at once by the batched mode.")
    ap.add_argument("--per-image", type=int, default=4, help="Targets solved one by one.")
    ap.add_argument("--outer", type=int, default=10)
    ap.add_argument("--inner", type=int, default=10, help="Input steps and clone steps per outer step.")
    args = ap.parse_args()
    batches = [int(b) for b in args.batch.split(",")]
    profile = get_profile("cpu")
    cell = Cell(dataset="mnist", victim="mnistnet", cut="split-2", defense="raw", profile="cpu", seed=0, attack="unsplit")
    data = carve(DATASETS.get("mnist")(Path(args.data_root), download=False), profile)
    with tempfile.TemporaryDirectory() as tmp:
        trained = train_victim(cell, data=data, profile=profile, cache_dir=Path(tmp))
    view, truth = build_view(
        cell=cell, model=trained.model, data=data, client_indices=trained.client_indices,
        granted=UnSplit.requires, n_targets=max(batches),
    )

    def solve(n: int, mode: str) -> tuple[torch.Tensor, float]:
        config = UnSplitConfig(n_targets=n, outer_steps=args.outer, input_steps=args.inner, model_steps=args.inner)
        start = time.perf_counter()
        out = UnSplit(view=view, profile="cpu", seed=0, config=config, mode=mode).run()
        return out.reconstructions, time.perf_counter() - start

    k = args.per_image
    per_image, per_image_s = solve(k, "per_image")
    print(f"UnSplit, MnistNet split-2 raw, {args.outer} x ({args.inner} + {args.inner}) steps, "
          f"torch threads {torch.get_num_threads()}")
    print(f"  per-image mode: {k} targets in {per_image_s:.1f} s = {per_image_s / k:.2f} s per image; "
          f"masked MSE {masked_mse(per_image, truth.x[:k]).mean():.4f}")
    for n in batches:
        batched, batched_s = solve(n, "batched")
        gap = (batched[:k] - per_image).abs().max().item()
        print(f"  batched, {n:4d} targets: {batched_s:7.1f} s = {batched_s / n:.3f} s per image, "
              f"speed-up per image {per_image_s / k / (batched_s / n):6.1f}x; first {k}: masked MSE "
              f"{masked_mse(batched[:k], truth.x[:k]).mean():.4f}, max |batched - per-image| {gap:.1e}; "
              f"all {n}: masked MSE {masked_mse(batched, truth.x[:n]).mean():.4f}")


if __name__ == "__main__":
    main()
