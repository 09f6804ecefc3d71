"""Does a stronger FORA configuration leak on CIFAR-10 (JPEG)? Variants of the cpu budget against one victim.

FORA at the cpu budget scores below the floor on CIFAR-10 (JPEG), SimpleCNN L2H (64×8×8), even on raw
(``results/issue13-cifar10-jpeg``). This script reruns the attack, outside the grid, on the victim a
grid cell would train (cached under ``--checkpoints``), with one change to the cpu ``FORAConfig`` per
variant, and prints one JSON line: SSIM and MSE of the reconstructions, the MK-MMD before and after,
and every 100th iteration's critic gap, MK-MMD and mean cross distance.

Variants (``--variant``):

- ``base``: the cpu budget; ``--critic-width``, ``--critic-blocks``, ``--substitute-lr``,
  ``--substitute-width`` and ``--iterations`` change one field each;
- ``vgg``: the substitute head replaced by the released code's VGG-style layout (two 3×3 conv-BN-ReLU
  and a 2×2 max pool per halving of the side, width doubling, then a 3×3 conv-BN-ReLU to the cut's
  channels): deeper and wider than :class:`attacks.fora_nets.SubstituteHead`.

``--untrained`` attacks the victim as its training starts instead (the released code attacks while it
trains, so its substitute first meets a random network).

    python benchmarks/fora_variants.py --variant base --critic-width 64 --critic-blocks 2
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time
from pathlib import Path

import torch
from torch import nn

import attacks.fora as fora
from attacks import ATTACKS
from attacks.fora_config import CONFIGS as FORA_CONFIGS
from bench.data import DATASETS
from bench.data.splits import carve
from bench.profiles import get_profile
from bench.run.attack_cell import VictimRunsForCell, score_reconstructions
from bench.run.attacker_views import build_view
from bench.run.cell import Cell
from bench.run.training import initial_model


class VGGSubstituteHead(nn.Module):
    """The released substitute's layout (VGG-16-BN blocks) down to the cut: ``log2(H / h)`` blocks."""

    def __init__(self, input_shape: tuple[int, ...], cut_shape: tuple[int, ...], width: int = 32) -> None:
        super().__init__()
        channels, side = input_shape[0], input_shape[1]
        layers: list[nn.Module] = []
        for i in range(int(round(math.log2(side / cut_shape[1])))):
            out = width * 2**i
            layers += [nn.Conv2d(channels, out, 3, padding=1), nn.BatchNorm2d(out), nn.ReLU(),
                       nn.Conv2d(out, out, 3, padding=1), nn.BatchNorm2d(out), nn.ReLU(), nn.MaxPool2d(2)]
            channels = out
        layers += [nn.Conv2d(channels, cut_shape[0], 3, padding=1), nn.BatchNorm2d(cut_shape[0]), nn.ReLU()]
        self.body = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=("base", "vgg"), default="base")
    parser.add_argument("--defense", default="raw")
    parser.add_argument("--cr", type=float, default=8.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iterations", type=int)
    parser.add_argument("--critic-width", type=int)
    parser.add_argument("--critic-blocks", type=int)
    parser.add_argument("--substitute-width", type=int)
    parser.add_argument("--substitute-lr", type=float)
    parser.add_argument("--vgg-width", type=int, default=32)
    parser.add_argument("--untrained", action="store_true", help="attack the victim as its training starts")
    parser.add_argument("--data-root", type=Path, default=Path("../shared/data"))
    parser.add_argument("--checkpoints", type=Path, default=Path("results/issue13-cifar10-jpeg/checkpoints"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.variant == "vgg":
        fora.SubstituteHead = lambda inputs, cut, _width: VGGSubstituteHead(inputs, cut, args.vgg_width)

    profile = get_profile("cpu")
    data = carve(DATASETS.get("cifar10-jpeg")(args.data_root), profile)
    cell = Cell(dataset="cifar10-jpeg", victim="simplecnn", cut="l2h", defense=args.defense,
                defense_knobs={} if args.defense == "raw" else {"cr": args.cr}, profile="cpu", seed=args.seed,
                attack="fora", attack_knobs={"budget": 1.0})
    if args.untrained:
        model, client_indices = initial_model(cell, data, profile)
    else:
        trained = VictimRunsForCell(cell, data=data, profile=profile, cache_dir=args.checkpoints).honest()
        model, client_indices = trained.model, trained.client_indices
    view, truth = build_view(cell=cell, model=model, data=data, client_indices=client_indices,
                             granted=ATTACKS.get("fora").requires, n_targets=profile.targets)
    changes = {name: value for name, value in (
        ("iterations", args.iterations), ("critic_width", args.critic_width), ("critic_blocks", args.critic_blocks),
        ("substitute_width", args.substitute_width), ("substitute_lr", args.substitute_lr)) if value is not None}
    config = dataclasses.replace(FORA_CONFIGS["cpu"], **changes)
    started = time.perf_counter()
    attack = fora.FORA(view=view, profile="cpu", seed=args.seed, config=config)
    output = attack.run()
    metrics, _ = score_reconstructions(output.reconstructions, truth.x, scorings=ATTACKS.get("fora").scorings,
                                       masked=False)
    history = attack.history
    print(json.dumps({
        "variant": args.variant, "untrained": args.untrained, "defense": args.defense, "changes": changes,
        "seconds": time.perf_counter() - started,
        "ssim": metrics.get("ssim"), "mse": metrics.get("mse"), "diverged": output.diverged,
        "mmd_initial": history.mmd_initial, "mmd_final": history.mmd_final,
        "critic_gap_last_10pct": output.scores["fora_critic_gap"],
        "critic_gap_every_100": [round(v, 2) for v in history.critic_gap[::100]],
        "mmd_every_100": [round(v, 3) for v in history.mmd[::100]],
        "distance_every_100": [round(v, 2) for v in history.distance[::100]],
    }))


if __name__ == "__main__":
    main()
