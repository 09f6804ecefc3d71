"""Training-step time of the split engine: LightSplit-F (dense and structured R) vs raw vs the same
network as one model, plus the projection alone (forward + backward of ``Rᵀz``).

Measured side by side in one run (interleaved repeats, median per variant) and printed as ratios.

    python benchmarks/step_time.py [--victim resnet18 --cut l2h --batch 64 --repeats 5 --steps 5]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.nn import functional as F

from bench.run.engine import SplitModel, SplitTrainer
from defenses import build_defense
from victims import VICTIMS


def split_step_fn(victim_name, cut, defense, cr, x, y):
    torch.manual_seed(0)
    victim = VICTIMS.get(victim_name)()
    params = {"cr": cr} if cr else {}
    shape = victim.cuts[cut]
    model = SplitModel(victim=victim, cut=cut, num_classes=10, input_shape=tuple(x.shape[1:]),
                       defense=build_defense(defense, cut_shape=shape, seed=0, **params),
                       protocol="ushaped", heads="sch", clients=1)
    trainer = SplitTrainer(model=model, lr=1e-3)
    model.train()
    return lambda: trainer.step(0, x, y)


def monolithic_step_fn(victim_name, cut, x, y):
    torch.manual_seed(0)
    parts = VICTIMS.get(victim_name)().build(cut=cut, num_classes=10, input_shape=tuple(x.shape[1:]))
    model = torch.nn.Sequential(parts.head, parts.backbone, parts.tail).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def projection_fn(defense, cut_shape, cr, batch):
    """Forward ``Rᵀz`` and back-propagate a payload gradient: the projection's share of a step."""
    projection = build_defense(defense, cut_shape=cut_shape, seed=0, cr=cr).projection
    z = torch.randn(batch, *cut_shape, requires_grad=True)

    def step():
        payload = projection.project(z)
        payload.backward(torch.ones_like(payload))
    return step


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--victim", default="resnet18")
    ap.add_argument("--cut", default="l2h")
    ap.add_argument("--cr", type=float, default=8.0)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    victim = VICTIMS.get(args.victim)
    x = torch.rand(args.batch, *victim.input_shape)
    y = torch.randint(0, 10, (args.batch,))
    fns = {
        "monolithic": monolithic_step_fn(args.victim, args.cut, x, y),
        "raw": split_step_fn(args.victim, args.cut, "raw", None, x, y),
        "lightsplit-f": split_step_fn(args.victim, args.cut, "lightsplit-f", args.cr, x, y),
        "lightsplit-f-srht": split_step_fn(args.victim, args.cut, "lightsplit-f-srht", args.cr, x, y),
        "R alone, dense": projection_fn("lightsplit-f", victim.cuts[args.cut], args.cr, args.batch),
        "R alone, srht": projection_fn("lightsplit-f-srht", victim.cuts[args.cut], args.cr, args.batch),
    }
    for fn in fns.values():  # warm-up
        fn()
    times = {k: [] for k in fns}
    for _ in range(args.repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(args.steps):
                fn()
            times[name].append((time.perf_counter() - start) / args.steps)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{args.victim} {args.cut} batch {args.batch} CR {args.cr:g}, torch threads {torch.get_num_threads()}, "
          f"median of {args.repeats}×{args.steps} steps")
    for k, v in med.items():
        print(f"  {k:<13} {1000 * v:8.1f} ms/step")
    print(f"  lightsplit-f / raw        = {med['lightsplit-f'] / med['raw']:.3f}  (target <= 1.05)")
    print(f"  lightsplit-f / monolithic = {med['lightsplit-f'] / med['monolithic']:.3f}  (target <= 1.10)")
    print(f"  raw / monolithic          = {med['raw'] / med['monolithic']:.3f}")
    print(f"  lightsplit-f-srht / raw   = {med['lightsplit-f-srht'] / med['raw']:.3f}")
    print(f"  lightsplit-f-srht / monolithic = {med['lightsplit-f-srht'] / med['monolithic']:.3f}")
    print(f"  lightsplit-f-srht / lightsplit-f = {med['lightsplit-f-srht'] / med['lightsplit-f']:.3f}")
    print(f"  projection alone, srht / dense   = {med['R alone, srht'] / med['R alone, dense']:.3f}")


if __name__ == "__main__":
    main()
