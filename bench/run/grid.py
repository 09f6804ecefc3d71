"""Expand command-line choices into validated cells; every error is caught here, before anything runs."""
from __future__ import annotations

import importlib.util
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bench.attack_knobs import BUDGET, MEASURED
from bench.data import INPUT_SHAPES
from bench.errors import GridError, MissingExtraError
from bench.knobs import Knob, KnobError
from bench.profiles import PROFILES
from bench.registry import RegistryError
from bench.run.cell import Cell
from bench.run.device import forked_rng
from bench.run.engine import HEAD_OWNERSHIP, PROTOCOLS
from defenses import DEFENSES, PAYLOAD_TRANSFORMS, DefenseConfigError, build_defense, knobs_of, split_name
from victims import VICTIMS, Victim, default_victim

PARTITIONS = ("iid", "dirichlet")
SEED_LIMIT = 2**32  # np.random.seed takes seeds in [0, 2**32)


@dataclass(frozen=True)
class GridSpec:
    """The choices of one ``bench run``; every list is crossed with every other.

    ``knobs`` maps a knob's name to the values to cross, for whichever defense or attack of the
    grid declares it; a knob not named crosses its ``sweep`` (or its default).
    """

    datasets: tuple[str, ...]
    defenses: tuple[str, ...]
    seeds: tuple[int, ...]
    profile: str = "cpu"
    victim: str | None = None
    cut: str | None = None
    knobs: Mapping[str, tuple] = field(default_factory=dict)
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
    attack_knobs = {attack: attack_knobs_of(attack) for attack in spec.attacks}
    _check_knob_names(spec, attack_knobs)
    cells: dict[str, Cell] = {}
    for dataset in spec.datasets:
        try:
            victim_name = spec.victim or default_victim(dataset)
        except ValueError as err:
            raise GridError(f"{err}; pass --victim") from None
        victim = _get(VICTIMS, victim_name)()
        cut = spec.cut or victim.default_cut
        if cut not in victim.cuts:
            raise GridError(f"victim '{victim_name}' has no cut '{cut}' (known: {', '.join(victim.cuts)})")
        _check_sequence_victim(victim_name, victim, spec)
        input_shape = tuple(INPUT_SHAPES.get(dataset) if dataset in INPUT_SHAPES else victim.input_shape)
        cut_shape = _cut_shape(victim, cut, dataset, input_shape)
        for defense in spec.defenses:
            for defense_params in _defense_params(defense, spec, cut_shape, input_shape, per_token=victim.per_token):
                for attack in spec.attacks:
                    given = _measured_budgets(spec, attack, dataset=dataset, victim=victim_name, cut=cut)
                    for attack_params in _combinations(attack_knobs[attack], given, f"attack '{attack}'"):
                        for lam, seed in itertools.product(spec.lambda_wccs, spec.seeds):
                            cell = Cell(
                                dataset=dataset, victim=victim_name, cut=cut, defense=defense, profile=spec.profile,
                                seed=seed, protocol=spec.protocol, heads=spec.heads, partition=spec.partition,
                                alpha=spec.alpha, clients=spec.clients, lambda_wcc=lam, attack=attack,
                                defense_knobs=defense_params, attack_knobs=attack_params,
                            )
                            for c in (cell.matched_raw(), cell):
                                cells.setdefault(c.id, c)
    return list(cells.values())


def _measured_budgets(spec: GridSpec, attack: str, *, dataset: str, victim: str, cut: str) -> Mapping[str, tuple]:
    """``spec.knobs`` with the budget ``"measured"`` replaced by the attack's budget table's for this
    setting (:func:`attacks.budget_table.measured_budget`); unchanged without it or without an attack."""
    budgets = spec.knobs.get(BUDGET.name, ())
    if attack == "none" or MEASURED not in budgets:
        return spec.knobs
    from attacks import ATTACKS
    from attacks.budget_table import NoMeasuredBudget, measured_budget

    try:
        measured = measured_budget(_get(ATTACKS, attack), name=attack, profile=spec.profile, dataset=dataset,
                                   victim=victim, cut=cut)
    except NoMeasuredBudget as err:
        raise GridError(str(err)) from None
    return {**spec.knobs, BUDGET.name: tuple(measured if b == MEASURED else b for b in budgets)}


def _cut_shape(victim: Victim, cut: str, dataset: str, input_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The cut's shape on the dataset's inputs (``input_shape``): its ``cuts`` entry unless they differ
    from the victim's own."""
    if victim.per_token or input_shape == tuple(victim.input_shape):
        return victim.cuts[cut]
    try:
        with forked_rng():  # building initialises weights: leave the seed stream alone
            return victim.build(cut=cut, num_classes=2, input_shape=input_shape).cut_shape
    except ValueError as err:
        raise GridError(f"dataset '{dataset}': {err}") from None


def attack_knobs_of(attack: str) -> tuple[Knob, ...]:
    """The knobs an attack reads (none without an attack)."""
    if attack == "none":
        return ()
    from attacks import ATTACKS

    return _get(ATTACKS, attack).knobs


def resolved_knobs(cell: Cell) -> dict[str, dict[str, Any]]:
    """Every knob the cell's defense and attack read, with the defaults the cell leaves out."""

    def resolve(knobs: tuple[Knob, ...], named: dict[str, Any]) -> dict[str, Any]:
        return {k.name: named.get(k.name, None if k.required else k.default) for k in knobs}

    return {
        "defense": resolve(knobs_of(cell.defense), cell.defense_params()),
        "attack": resolve(attack_knobs_of(cell.attack), cell.attack_params()),
    }


def _identity(knobs: tuple[Knob, ...], values: tuple) -> dict[str, Any]:
    """The knobs that enter a cell's id: every required one, the others when not at their default."""
    return {k.name: v for k, v in zip(knobs, values) if k.required or v != k.default}


def _combinations(knobs: tuple[Knob, ...], given: Mapping[str, tuple], owner: str) -> list[dict[str, Any]]:
    """One identity dict per combination of ``knobs``' values (checked against each knob's range)."""
    choices = []
    for knob in knobs:
        try:
            values = tuple(_value(knob, v) for v in given[knob.name]) if knob.name in given else knob.default_values()
        except KnobError as err:
            raise GridError(f"knob {err}") from None
        if not values:
            raise GridError(f"{owner} needs a value for knob '{knob.name}' (--knob {knob.name}=...)")
        choices.append(values)
    return [_identity(knobs, values) for values in itertools.product(*choices)]


def _value(knob: Knob, value: Any) -> Any:
    """A command-line string parsed by its knob, or a Python value checked by it."""
    return knob.parse(value) if isinstance(value, str) else knob.check(value)


def _check_knob_names(spec: GridSpec, attack_knobs: dict[str, tuple[Knob, ...]]) -> None:
    """Every named knob is read by some defense or attack of the grid, and by only one kind of part."""
    defense_names = {k.name for d in spec.defenses for k in _defense_knobs(d)}
    attack_names = {k.name for knobs in attack_knobs.values() for k in knobs}
    for name in spec.knobs:
        if not spec.knobs[name]:
            raise GridError(f"--knob {name} has no value")
        if name in defense_names and name in attack_names:
            raise GridError(f"knob '{name}' is read by both a defense and an attack of the grid")
        if name not in defense_names | attack_names:
            raise GridError(f"no defense or attack of the grid reads knob '{name}'")


def _defense_knobs(defense: str) -> tuple[Knob, ...]:
    try:
        return knobs_of(defense)
    except (RegistryError, DefenseConfigError) as err:
        raise GridError(str(err)) from None


def _validate_scalars(spec: GridSpec) -> None:
    if not spec.datasets:
        raise GridError("no dataset given")
    if not spec.defenses:
        raise GridError("no defense given")
    if not spec.seeds:
        raise GridError("the seed list is empty")
    bad_seeds = [s for s in spec.seeds if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < SEED_LIMIT]
    if bad_seeds:
        raise GridError(f"seed {bad_seeds[0]} is not an integer in [0, 2**32) (seeds seed NumPy, which takes no other)")
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
    if spec.partition == "iid" and spec.alpha is not None:
        raise GridError("--alpha is the Dirichlet concentration: an iid partition takes none")
    if spec.clients < 1:
        raise GridError(f"--clients must be >= 1, got {spec.clients}")
    bad = [v for v in spec.lambda_wccs if not math.isfinite(v) or v < 0]
    if bad:
        raise GridError(f"--lambda-wcc must be >= 0, got {bad[0]:g}")
    from bench.data import DATASETS

    for dataset in spec.datasets:
        _get(DATASETS, dataset)


def _check_sequence_victim(name: str, victim, spec: GridSpec) -> None:
    """A victim's optional package is installed; a per-token (language) victim runs utility cells only."""
    if victim.requires is not None and importlib.util.find_spec(victim.requires) is None:
        raise MissingExtraError(f"victim '{name}' needs the '{victim.requires}' package: pip install 'splitbench[text]'")
    if not victim.per_token:
        return
    attacks = [a for a in spec.attacks if a != "none"]
    if attacks:
        raise GridError(f"attack '{attacks[0]}' does not run on victim '{name}' (language-model cells take --attack none)")
    if any(spec.lambda_wccs) or spec.clients != 1:
        raise GridError(f"victim '{name}' trains one client without WCC (--clients 1, --lambda-wcc 0)")


def _defense_params(
    defense: str, spec: GridSpec, cut_shape: tuple[int, ...], input_shape: tuple[int, ...], *, per_token: bool = False
) -> list[dict]:
    """One parameter dict per combination of the knobs this defense reads, each checked at the cut."""
    combos = _combinations(_defense_knobs(defense), spec.knobs, f"defense '{defense}'")
    for params in combos:
        try:
            _check_at_cut(defense, cut_shape, input_shape, params, per_token)
        except DefenseConfigError as err:
            raise GridError(str(err)) from None
    return combos


_BUILT_AT_CUT: set[tuple] = set()


def _check_at_cut(
    defense: str, cut_shape: tuple[int, ...], input_shape: tuple[int, ...], params: dict, per_token: bool
) -> None:
    """Build the defense once at the cut (its constructor is the check); a configuration that built
    is not built again in this process. Building can cost a QR of a d×k matrix, and a grid file
    repeats each configuration in many blocks and seeds.

    Raises:
        DefenseConfigError: when it cannot be realised at this cut.
    """
    base, transforms = split_name(defense)
    parts = (DEFENSES.get(base), *(PAYLOAD_TRANSFORMS.get(t) for t in transforms))  # a re-registered part is checked anew
    key = (parts, tuple(cut_shape), input_shape, per_token, tuple(sorted(params.items())))
    if key not in _BUILT_AT_CUT:
        build_defense(defense, cut_shape=cut_shape, seed=0, per_token=per_token, input_shape=input_shape, **params)
        _BUILT_AT_CUT.add(key)


def _get(registry, name: str):
    try:
        return registry.get(name)
    except RegistryError as err:
        raise GridError(str(err)) from None
