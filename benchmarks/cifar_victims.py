"""Which cpu-profile victim for CIFAR-10 (JPEG) at the paper's 64×8×8 cut: accuracy per minute.

Each candidate trains undefended (head → backbone → tail, Adam 1e-3, batch 64, one thread) on the
cpu profile's 6,000 members for the same wall-clock budget, then is scored on the profile's 2,000
test images. Both candidates cut at 64×8×8 (d = 4096) on 32×32 RGB input.

    python benchmarks/cifar_victims.py [--seconds 120] [--data-root ../shared/data]
"""
from __future__ import annotations

import argparse
import time

import torch
from torch import nn

from bench.data import DATASETS
from bench.data.splits import carve
from bench.profiles import get_profile
from victims import VICTIMS

CANDIDATES = (("simplecnn", "l2h"), ("resnet18", "l2h"))


def _accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    model.eval()
    with torch.no_grad():
        hits = sum(int((model(xb).argmax(1) == yb).sum()) for xb, yb in zip(x.split(500), y.split(500)))
    return hits / len(y)


def measure(name: str, cut: str, data, seconds: float) -> dict:
    torch.manual_seed(0)
    parts = VICTIMS.get(name)().build(cut=cut, num_classes=data.num_classes, input_shape=data.input_shape)
    model = nn.Sequential(parts.head, parts.backbone, parts.tail)
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = data.members.x, data.members.y
    generator = torch.Generator().manual_seed(0)
    steps, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        model.train()
        for batch in torch.randperm(len(y), generator=generator).split(64):
            loss = nn.functional.cross_entropy(model(x[batch]), y[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            steps += 1
            if time.perf_counter() - started >= seconds:
                break
    elapsed = time.perf_counter() - started
    return {
        "victim": name, "cut": "x".join(map(str, parts.cut_shape)), "s_per_step": elapsed / steps,
        "epochs": steps * 64 / len(y), "test_acc": _accuracy(model, data.test.x, data.test.y),
        "minutes_for_10_epochs": elapsed / steps * 10 * len(y) / 64 / 60,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--data-root", default="../shared/data")
    args = parser.parse_args()
    torch.set_num_threads(1)
    data = carve(DATASETS.get("cifar10-jpeg")(args.data_root), get_profile("cpu"))
    print(f"| victim | cut | s/step (batch 64, 1 thread) | epochs in {args.seconds:.0f} s | test acc | min for 10 epochs |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name, cut in CANDIDATES:
        r = measure(name, cut, data, args.seconds)
        cells = (r["victim"], r["cut"], f"{r['s_per_step']:.3f}", f"{r['epochs']:.2f}", f"{r['test_acc']:.3f}",
                 f"{r['minutes_for_10_epochs']:.1f}")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
