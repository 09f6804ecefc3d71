"""Does replacing a payload critic that won outright keep SDAR's adversarial game alive?

Trains the victim as a cell does, with SDAR watching, for the first ``--steps`` observed steps, twice:
as the attack runs (a critic that wins a window is replaced, ``attacks.sdar_collapse``) and with the
first critic kept to the end, as released. Prints one JSON line per run: the payload critic's mean
loss per window (2·ln 2 ≈ 1.39 when it cannot tell the simulator from the client) and the restarts.
Nothing is stored.

    OMP_NUM_THREADS=1 python benchmarks/sdar_critic_restart.py --dataset mnist --budget 16 --seed 0 --steps 300
"""
from __future__ import annotations

import argparse
import json
import time

import victims  # noqa: F401  (registers every victim)
from attacks.sdar import SDAR
from bench.data import DATASETS
from bench.data.splits import carve
from bench.profiles import get_profile
from bench.run.attacker_views import build_view
from bench.run.cell import Cell
from bench.run.training import initial_model, train_victim
from victims.base import VICTIMS, default_victim


class Enough(Exception):
    """Raised by the watching attack once it has seen its steps."""


def watch(args: argparse.Namespace, *, keep_first_critic: bool) -> dict:
    """One prefix run; the critic is never replaced when ``keep_first_critic``."""
    profile = get_profile(args.profile)
    data = carve(DATASETS.get(args.dataset)(args.data_root), profile)
    name = default_victim(args.dataset)
    cell = Cell(dataset=args.dataset, victim=name, cut=VICTIMS.get(name).default_cut, defense="raw",
                profile=args.profile, seed=args.seed, attack="sdar")
    model, indices = initial_model(cell, data, profile)
    view, _ = build_view(cell=cell, model=model, data=data, client_indices=indices, granted=SDAR.requires,
                         n_targets=profile.targets, with_targets=False)

    class Prefix(SDAR):
        def on_step(self, step_view):  # noqa: ANN001
            if self.steps_seen >= args.steps:
                raise Enough
            super().on_step(step_view)

        def _restart_critic(self) -> None:
            if not keep_first_critic:
                super()._restart_critic()

    attack = Prefix(view=view, profile=args.profile, seed=args.seed, budget=args.budget)
    started = time.perf_counter()
    try:
        train_victim(cell, data=data, profile=profile, observers=[attack])
    except Enough:
        pass
    losses, w = attack.history["e_dis_loss"], attack.config.window
    return {
        "critic": "kept" if keep_first_critic else "replaced when it wins", "dataset": args.dataset,
        "budget": args.budget, "seed": args.seed, "steps": attack.steps_seen, "iterations": len(losses),
        "restarts_at": attack.watch.critic_restarts,
        "e_dis_loss_per_window": [round(sum(losses[i:i + w]) / len(losses[i:i + w]), 3) for i in range(0, len(losses), w)],
        "seconds": round(time.perf_counter() - started),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="mnist")
    parser.add_argument("--data-root", default="../shared/data")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--budget", type=float, default=16.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    for keep in (True, False):
        print(json.dumps(watch(args, keep_first_critic=keep)), flush=True)


if __name__ == "__main__":
    main()
