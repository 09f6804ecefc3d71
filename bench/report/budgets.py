"""The budget a report reads each attack at: one multiplier for every attack, or each attack's measured one.

``bench report --attack-budget 4`` (and ``bench verify``) reads every attack's cells at ×4.
``--attack-budget measured`` reads each attack, on each (profile, dataset, victim, cut), at the
budget its class's budget table gives there (:func:`attacks.budget_table.measured_budget`; a closed
form at 1): the budget a grid runs it at with ``budget = "measured"``, so a folder such a grid filled
is reported at the budgets it was run at, each column at its own. An attack the table does not cover
on a setting (or that this installation does not register) is read at 1 there, and
:func:`budget_notes` says so.
"""
from __future__ import annotations

import math
from functools import cache

import pandas as pd

from bench.attack_knobs import MEASURED

AttackBudget = float | str  # a multiplier, or MEASURED
SETTING = ("profile", "dataset", "victim", "cut")  # what a budget table entry is measured on


def parse_attack_budget(value: object) -> AttackBudget:
    """``"measured"`` or a positive number, as given on the command line.

    Raises:
        ValueError: anything else (one line).
    """
    if isinstance(value, str) and value.strip().lower() == MEASURED:
        return MEASURED
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"attack budget must be a positive number or '{MEASURED}', got {value!r}")
    return number


def describe(budget: AttackBudget) -> str:
    """``×4`` for a multiplier, ``each attack's measured budget`` for :data:`MEASURED`."""
    return "each attack's measured budget" if budget == MEASURED else f"×{float(budget):g}"


@cache
def _measured(attack: str, profile: str, dataset: str, victim: str, cut: str) -> float | None:
    from attacks import ATTACKS  # deferred: reading stored records needs no torch
    from attacks.budget_table import NoMeasuredBudget, measured_budget
    from bench.registry import RegistryError

    try:
        return measured_budget(ATTACKS.get(attack), name=attack, profile=profile, dataset=dataset, victim=victim, cut=cut)
    except (NoMeasuredBudget, RegistryError):
        return None


def _setting_columns(table: pd.DataFrame) -> list[str]:
    return ["attack", *(c for c in SETTING if c in table)]


def _budget_of(key: tuple, columns: list[str]) -> float | None:
    named = dict(zip(columns, key))
    if any(not isinstance(named.get(c), str) for c in ("attack", *SETTING)):
        return None
    return _measured(*(named[c] for c in ("attack", *SETTING)))


def parts_at(table: pd.DataFrame, budget: AttackBudget) -> list[tuple[float, pd.DataFrame]]:
    """The attack rows of ``table`` (not the victims', attack ``none``), each with the budget it is read at.

    Args:
        table: tidy rows.
        budget: a multiplier (one part, all attack rows at it) or :data:`MEASURED` (one part per attack
            and setting, at that attack's measured budget there; 1 where none is measured).

    Returns:
        ``[(budget, rows), ...]``; the rows keep ``table``'s index.
    """
    attacks = table[table["attack"] != "none"] if "attack" in table else table.iloc[0:0]
    if budget != MEASURED:
        return [(float(budget), attacks)]
    columns = _setting_columns(attacks)
    return [(_budget_of(key, columns) or 1.0, part)
            for key, part in attacks.groupby(columns, dropna=False, sort=True)]


def budget_notes(table: pd.DataFrame) -> list[str]:
    """The note under a table read at :data:`MEASURED`: for each attack and setting of ``table`` (the
    floor's prior left out), the budget read and its budget table's verdict and evidence there (measured
    on the victims its evidence names, which need not be the table's), or that none is measured."""
    from attacks import ATTACKS
    from attacks.budget_table import measured_entry
    from bench.registry import RegistryError

    attacks = table[~table["attack"].isin(["none", "prior"])] if "attack" in table else table.iloc[0:0]
    columns = _setting_columns(attacks)
    lines = []
    for key in sorted(attacks[columns].drop_duplicates().itertuples(index=False), key=lambda k: tuple(map(str, k))):
        named = dict(zip(columns, key))
        where = f"{' '.join(str(named.get(c)) for c in SETTING[:3])}/{named.get('cut')}"
        try:
            cls = ATTACKS.get(named["attack"])
        except RegistryError:
            cls = None
        entry = measured_entry(cls, **{c: named.get(c) for c in SETTING}) if cls is not None else None
        if entry is not None:
            lines.append(f"{named['attack']} ×{entry.budget:g} on {where}: {entry.verdict} ({entry.evidence})")
        elif cls is not None and not cls.configs:
            lines.append(f"{named['attack']} ×1 on {where}: a closed form, nothing to scale")
        else:
            lines.append(f"{named['attack']} ×1 on {where}: no measured budget (read at the profile's own)")
    if not lines:
        return []
    return ["Measured budgets (each attack's budget table, judged on the victims its evidence names): "
            + "; ".join(lines) + "."]
