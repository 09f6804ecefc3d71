"""Expand command-line choices into validated cells; every error is caught here, before anything runs."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from bench.cell import Cell
from bench.engine import HEAD_OWNERSHIP, PROTOCOLS
from bench.profiles import PROFILES
from bench.registry import RegistryError
from defenses import DefenseConfigError, build_defense, knobs_of
from victims import VICTIMS

DEFAULT_VICTIM = {
    "mnist": "mnistnet",
    "fashion-mnist": "simplecnn",
    "digits": "mnistnet",
    "cifar10": "resnet18",
    "cifar100": "resnet18",
    "gtsrb": "micronnet",
    "imagenet": "resnet50",
    "har": "har-mlp",
}
PARTITIONS = ("iid", "dirichlet")


class GridError(ValueError):
    """An invalid grid choice; its message is one line naming the problem."""


@dataclass(frozen=True)
class GridSpec:
    """The choices of one ``bench run``; every list is crossed with every other."""

    datasets: tuple[str, ...]
    defenses: tuple[str, ...]
    seeds: tuple[int, ...]
    profile: str = "cpu"
    victim: str | None = None
    cut: str | None = None
    crs: tuple[float, ...] = (8.0, 16.0, 32.0)
    sigmas: tuple[float, ...] = (0.02,)
    tiles: tuple[int, ...] = (2,)
    widths: tuple[int, ...] = (512,)
    lambda_wccs: tuple[float, ...] = (0.0,)
    attacks: tuple[str, ...] = ("none",)
    protocol: str = "ushaped"
    heads: str = "sch"
    partition: str = "iid"
    alpha: float | None = None
    clients: int = 1


def expand(spec: GridSpec) -> list[Cell]:
    """All cells of the grid, matched raw cells included, in a stable order without duplicates.

    Raises:
        GridError: on the first invalid choice.
    """
    _validate_scalars(spec)
    cells: dict[str, Cell] = {}
    for dataset in spec.datasets:
        victim_name = spec.victim or DEFAULT_VICTIM.get(dataset)
        if victim_name is None:
            raise GridError(f"no default victim for dataset '{dataset}'; pass --victim")
        victim = _get(VICTIMS, victim_name)()
        cut = spec.cut or victim.default_cut
        if cut not in victim.cuts:
            raise GridError(f"victim '{victim_name}' has no cut '{cut}' (known: {', '.join(victim.cuts)})")
        cut_shape = victim.cuts[cut]
        for defense in spec.defenses:
            for params in _defense_params(defense, spec, cut_shape):
                for lam, attack, seed in itertools.product(spec.lambda_wccs, spec.attacks, spec.seeds):
                    cell = Cell(
                        dataset=dataset, victim=victim_name, cut=cut, defense=defense, profile=spec.profile,
                        seed=seed, protocol=spec.protocol, heads=spec.heads, partition=spec.partition,
                        alpha=spec.alpha, clients=spec.clients, lambda_wcc=lam, attack=attack, **params,
                    )
                    for c in (cell.matched_raw(), cell):
                        cells.setdefault(c.id, c)
    return list(cells.values())


def _validate_scalars(spec: GridSpec) -> None:
    if not spec.datasets:
        raise GridError("no dataset given")
    if not spec.defenses:
        raise GridError("no defense given")
    if not spec.seeds:
        raise GridError("the seed list is empty")
    if spec.profile not in PROFILES:
        raise GridError(f"unknown profile '{spec.profile}' (known: {', '.join(PROFILES)})")
    if spec.protocol not in PROTOCOLS:
        raise GridError(f"unknown protocol '{spec.protocol}' (known: {', '.join(PROTOCOLS)})")
    if spec.heads not in HEAD_OWNERSHIP:
        raise GridError(f"unknown head ownership '{spec.heads}' (known: {', '.join(HEAD_OWNERSHIP)})")
    if spec.partition not in PARTITIONS:
        raise GridError(f"unknown partition '{spec.partition}' (known: {', '.join(PARTITIONS)})")
    if spec.partition == "dirichlet" and (spec.alpha is None or spec.alpha <= 0):
        raise GridError("a dirichlet partition needs --alpha > 0")
    if spec.clients < 1:
        raise GridError(f"--clients must be >= 1, got {spec.clients}")
    for name, values in (("lambda-wcc", spec.lambda_wccs), ("sigma", spec.sigmas)):
        bad = [v for v in values if not math.isfinite(v) or v < 0]
        if bad:
            raise GridError(f"--{name} must be >= 0, got {bad[0]:g}")
    if any(cr <= 0 or not math.isfinite(cr) for cr in spec.crs):
        raise GridError("--cr values must be positive")
    from bench.data import DATASETS

    for dataset in spec.datasets:
        _get(DATASETS, dataset)
    if any(a != "none" for a in spec.attacks):
        from attacks import ATTACKS

        for attack in spec.attacks:
            if attack != "none":
                _get(ATTACKS, attack)


def _defense_params(defense: str, spec: GridSpec, cut_shape: tuple[int, ...]) -> list[dict]:
    """One parameter dict per combination of the knobs this defense reads, each checked at the cut."""
    try:
        knobs = knobs_of(defense)
    except (RegistryError, DefenseConfigError) as err:
        raise GridError(str(err)) from None
    choices = {"cr": spec.crs, "sigma": spec.sigmas, "tile": spec.tiles, "width": spec.widths}
    combos = [dict(zip(knobs, values)) for values in itertools.product(*(choices[k] for k in knobs))]
    for params in combos:
        try:
            build_defense(defense, cut_shape=cut_shape, seed=0, **params)
        except DefenseConfigError as err:
            raise GridError(str(err)) from None
    return combos


def _get(registry, name: str):
    try:
        return registry.get(name)
    except RegistryError as err:
        raise GridError(str(err)) from None
