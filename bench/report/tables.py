"""The paper's tables: one frozen spec per table (:mod:`bench.report.table_specs`), built into
formatted strings from the aggregate.

A spec names the row factors, the (attack, metric) columns and how each column shows Δ vs Raw. The
Raw row of every table is absolute. Factors not named by a spec but varying in the results become
extra row factors, so no two configurations ever share a row. A column whose attack (or metric)
has no stored cell is left out and listed as missing; a cell without a value is "—" with a
footnote saying why (no stored cell, the stored reason of a missing value, all runs diverged). A
configuration whose every stored cell failed or diverged is named in a note, with the first line of
each reason (:mod:`bench.report.failures`).
Where the ``prior`` attack was run, a "floor (prior)" row shows what it scores in each image attack
column (:mod:`bench.report.floor`); a worst-case column (Tables II, III) shows the most leaking
image attack per row (:mod:`bench.report.worst_case`). Both are absolute and explained in the notes.
Each attack column's value carries the mark of its attack's convergence verdict at the table's budget
(:mod:`bench.report.convergence`; a legend under the table, the verdict itself in the CSV).
"""
from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from bench.attack_knobs import MEASURED
from bench.report.aggregate import aggregate, at_default_settings, config_key, ok_rows, select_profile, victim_fields, victim_view
from bench.report.budgets import AttackBudget, budget_notes, describe
from bench.report.convergence import judge_at, legend
from bench.report.failures import failure_notes
from bench.report.floor import (
    FLOOR_KEYS,
    FLOOR_LABEL,
    PRIOR,
    baseline_notes,
    floor_lookup,
    floor_metric,
    prior_floor,
    runs_past_floor,
)
from bench.report.labels import (
    FACTOR_LABELS,
    MINUS,
    attack_label,
    defense_rank,
    factor_value,
    metric_label,
    number,
    privacy_direction,
)
from bench.report.table_specs import (
    ABS,
    ABS_RATIO,
    ABS_REL,
    PCT_OF_RAW,
    POINTS,
    REL,
    TABLES,
    WORST,
    Column,
    TableSpec,
)
from bench.report.worst_case import image_attacks, worst_case

__all__ = ["ABS", "ABS_RATIO", "ABS_REL", "DASH", "PCT_OF_RAW", "POINTS", "REL", "TABLES", "WORST", "BuiltTable",
           "Column", "TableSpec", "build_table"]

DASH = "—"
SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
VIA = "via"  # the worst case's attack, in its rows of the aggregate and the numbers
NUMBER_COLUMNS = ["attack", "metric", "mean", "ci", "n", "n_runs", "n_diverged", "delta", "delta_ci", "rel",
                  "rel_ci", "n_pairs", "note"]
CONVERGENCE = "convergence"  # the CSV column of an attack cell's verdict (bench.report.convergence)


def row_fields(agg: pd.DataFrame) -> tuple[str, ...]:
    """The factors a table's rows can vary in: every configuration field but the attack, its
    settings, the profile and the worst case's ``via`` (a row shows a victim's metrics beside its
    attacks' columns)."""
    return tuple(f for f in victim_fields(agg) if f not in ("profile", VIA))


@dataclass
class BuiltTable:
    """A table ready to render: strings for show, numbers for CSV, footnotes and what is missing."""

    spec: TableSpec
    profile: str
    seeds: tuple[int, ...]
    header: list[tuple[str, str]]
    body: pd.DataFrame
    numbers: pd.DataFrame
    n_factors: int = 0
    footnotes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    attack_budget: AttackBudget = 1.0

    @property
    def has_defended_rows(self) -> bool:
        """Whether a row other than Raw (and the floor) shows up (Raw alone compares nothing)."""
        if "defense" not in self.numbers or not len(self.numbers):
            return False
        return bool(((self.numbers["defense"] != "raw") & (self.numbers["attack"] != PRIOR)).any())

    @property
    def has_attack_columns(self) -> bool:
        """Whether a column of an attack (not the victims', the worst case's or the floor's) has a value."""
        return "attack" in self.numbers and bool((~self.numbers["attack"].isin(["none", WORST, PRIOR])).any())

    @property
    def caption(self) -> str:
        runs = self.numbers["n_runs"] if len(self.numbers) else pd.Series([len(self.seeds)])
        low, high = int(runs.min()), int(runs.max())
        budget = ("" if self.attack_budget == 1.0 else ", each attack at its measured budget" if self.attack_budget == MEASURED
                  else f", attacks at ×{self.attack_budget:g} its budget")
        seeds = f"{high} seed{'s' if high != 1 else ''}" if low == high else f"{low}–{high} seeds per configuration"
        return (f"Table {self.spec.name}: {self.spec.title}. {self.spec.caption} Profile '{self.profile}'{budget}, "
                f"{seeds}; mean ± 95% CI over seeds (Student t).")


def _keep(frame: pd.DataFrame, filters: tuple[tuple[str, tuple | Callable[[Any], bool]], ...]) -> pd.DataFrame:
    for name, values in filters:
        column = frame[name]
        if callable(values):
            kept = pd.Series([pd.notna(v) and bool(values(v)) for v in column], index=column.index, dtype=bool)
        else:
            kept = column.isin(list(values))
        frame = frame[column.isna() | kept]
    return frame


def _cell_text(row: pd.Series, col: Column, spec: TableSpec) -> str | tuple[str, str]:
    """The shown text of one cell, or ``(DASH, reason)`` when there is nothing to show."""
    if row["n"] == 0:
        if row["n_runs"] and row["n_diverged"] == row["n_runs"]:
            return DASH, f"all {row['n_runs']} runs diverged"
        return DASH, row["note"] or "no finite value stored"
    m, metric = row["mean"], col.metric
    absolute = number(m, metric) + ("" if math.isnan(row["ci"]) else f" ± {number(row['ci'], metric)}")
    if col.delta == ABS or row["is_raw"]:
        return absolute
    if row["n_pairs"] == 0:
        return DASH, "no matched Raw run to compare with"
    ci = lambda v, unit="": "" if math.isnan(v) else f" ± {v:.1f}{unit}"  # noqa: E731
    rel, rel_ci = row["rel"], row["rel_ci"]
    if col.delta == REL:
        sign = (privacy_direction(metric) or 1) if spec.privacy_positive else 1
        return f"{sign * rel:+.1f}{ci(rel_ci)}%".replace("-", MINUS)
    if col.delta == POINTS:
        return number(row["delta"], metric, signed=True) + ("" if math.isnan(row["delta_ci"]) else f" ± {number(row['delta_ci'], metric)}")
    if col.delta == ABS_REL:
        return f"{absolute} ({rel:+.1f}%)".replace("-", MINUS)
    if col.delta == ABS_RATIO:
        return f"{absolute} (×{1 + rel / 100:.2f})".replace("-", MINUS)
    if col.delta == PCT_OF_RAW:
        return f"{100 + rel:.1f}{ci(rel_ci)}%".replace("-", MINUS)
    raise ValueError(f"unknown delta display '{col.delta}'")


def build_table(table: pd.DataFrame, spec: TableSpec, profile: str | None = None, *,
                attack_budget: AttackBudget = 1.0) -> BuiltTable:
    """Build one table from the tidy table.

    Besides one row per configuration, a table with image attack columns gets a floor row per
    (dataset, victim, cut) where the ``prior`` attack was run (:mod:`bench.report.floor`: its
    absolute value of each column's metric, a min-max column's from the prior's as-returned metric;
    blank in the victim's and HAR columns), placed after the last row of that (dataset, victim, cut);
    without prior cells there is no floor row. A :data:`WORST` column shows the worst case over
    every image attack stored (:mod:`bench.report.worst_case`), absolute, with the attack's name.

    Args:
        table: the tidy result table.
        spec: the table to build.
        profile: the profile to report (required when the table holds several).
        attack_budget: the attack budget the attack columns show (the victims' columns and the
            worst case do not depend on it): a multiplier, or :data:`~bench.attack_knobs.MEASURED`,
            each attack at its budget table's budget for the row's setting, shown in the column's header.

    Returns:
        The built table; its body is empty when no column has data.

    Raises:
        ValueError: mixed profiles without ``profile``, or an absent profile.
    """
    if spec.builder:  # a table of its own kind (table_specs.TableSpec.builder), imported on demand
        module, _, name = spec.builder.partition(":")
        return getattr(importlib.import_module(module), name)(table, spec, profile, attack_budget=attack_budget)
    table = select_profile(table, profile)
    attacks = {c.attack for c in spec.columns if c.attack not in (None, WORST)}
    metrics = {c.metric for c in spec.columns}
    parts = []
    if any(c.attack is None for c in spec.columns):
        parts.append(aggregate(victim_view(table), metrics=metrics).assign(attack=None))
    if worst_metrics := {c.metric for c in spec.columns if c.attack == WORST}:
        parts.append(worst_case(table, worst_metrics).rename(columns={"attack": VIA}).assign(attack=WORST))
    read = at_default_settings(table[table["attack"].isin(attacks)], budget=attack_budget)
    parts.append(aggregate(read, metrics=metrics))
    agg = _keep(pd.concat([p for p in parts if not p.empty] or [parts[-1]], ignore_index=True), spec.filters)
    present, missing = [], []
    for col in spec.columns:
        mine = agg[(agg["attack"].isna() if col.attack is None else agg["attack"] == col.attack)]
        if mine.empty and col.attack == WORST:
            missing.append(f"{attack_label(WORST)} (no image attack stored {metric_label(col.metric)})")
        elif mine.empty:
            missing.append(_missing_attack(table, col.attack, attack_budget) if col.attack
                           else "the victims' metrics (no stored cell)")
        elif (mine["metric"] == col.metric).any():
            present.append(col)
        else:
            label = f"{attack_label(col.attack or 'none')} {metric_label(col.metric)}"
            missing.append(f"{label.strip()} (never recorded)")
    missing = list(dict.fromkeys(missing))
    wanted = {(c.attack, c.metric) for c in present}
    records = [r for r in agg.to_dict("records") if (_none(r["attack"]), r["metric"]) in wanted]
    fields = row_fields(agg)
    cells = {(config_key(r, fields), _none(r["attack"]), r["metric"]): r for r in records}
    stored = {(config_key(r, fields), _none(r["attack"])) for r in records}
    configs = pd.DataFrame(records, columns=list(fields))[list(fields)].drop_duplicates()
    factors = _factors(configs, spec.rows, fields)
    configs = configs.sort_values(
        factors, key=lambda s: s.map(defense_rank) if s.name == "defense" else s, na_position="first"
    ) if len(configs) else configs
    header = [("", FACTOR_LABELS.get(f, f)) for f in factors]
    header += [(attack_label(c.attack or "none") + budget_suffix(read, c.attack, attack_budget), metric_label(c.metric))
               for c in present]
    floor = floor_lookup(prior_floor(table))
    images = image_attacks(table) | {WORST}
    floored = [c for c in present if c.attack in images and privacy_direction(c.metric)]
    config_rows = configs.to_dict("records")
    last = {tuple(c[k] for k in FLOOR_KEYS): i for i, c in enumerate(config_rows)}
    judged = judge_at(table[table["attack"].isin(attacks)], by=[f for f in fields if f in table], budget=attack_budget)
    verdicts = {(config_key(r, fields), r["attack"]): r["convergence"] for r in judged.to_dict("records")}
    fell: dict[tuple, list[int]] = {}
    for r in sorted(runs_past_floor(ok_rows(read), table).to_dict("records"), key=lambda r: r["seed"]):
        fell.setdefault((config_key(r, fields), r["attack"], r["metric"]), []).append(int(r["seed"]))
    footnotes: list[str] = []
    body_rows, numbers, floor_keys = [], [], []
    for i, config in enumerate(config_rows):
        key = config_key(config, fields)
        line = [factor_value(f, config[f]) for f in factors]
        for col in present:
            r = cells.get((key, col.attack, col.metric))
            verdict = verdicts.get((key, col.attack))
            if r is None:
                text = (DASH, "metric not recorded by this cell" if (key, col.attack) in stored else "no stored cell")
            else:
                text = _cell_text(r, col, spec)
                numbers.append({**{f: config[f] for f in factors}, "attack": col.attack or "none",
                                **{k: r[k] for k in NUMBER_COLUMNS[1:]}, **({VIA: r[VIA]} if col.attack == WORST else {}),
                                CONVERGENCE: verdict.verdict if verdict else None})
                if isinstance(text, str) and verdict:
                    text += verdict.mark
                reasons = [f"{r['n_diverged']} of {r['n_runs']} runs diverged (left out)"] if r["n_diverged"] else []
                if seeds := fell.get((key, col.attack, col.metric)):
                    reasons.append(f"no leakage measured on seed {', '.join(map(str, seeds))}: at or past that seed's "
                                   "floor (kept in the mean)")
                if isinstance(text, str) and reasons:
                    text = (text, "; ".join(reasons))
                if isinstance(text, str) and col.attack == WORST:
                    text += f" ({attack_label(r[VIA])})"
            line.append(text if isinstance(text, str) else _mark(text, footnotes))
        body_rows.append(line)
        place = tuple(config[k] for k in FLOOR_KEYS)
        if last[place] == i and any((*place, floor_metric(c.metric)) in floor for c in floored):
            floor_keys.append(place)
            body_rows.append(_floor_line(place, factors, present, floored, floor, spec, footnotes, numbers))
    labels = [f"{g}: {m}" if g else m for g, m in header]
    body = pd.DataFrame(body_rows, columns=labels)
    numbers_frame = pd.DataFrame(numbers, columns=None if numbers else NUMBER_COLUMNS)
    profile_name = str(table["profile"].iloc[0]) if len(table) else (profile or "")
    notes = [WORST_NOTE.format(metric=metric_label(c.metric).rstrip(" ↑↓")) for c in present if c.attack == WORST]
    shown = {v.verdict for v in verdicts.values()} if any(c.attack in attacks for c in present) else set()
    notes += [legend(sorted(shown), budget=attack_budget)] if shown else []
    notes += budget_notes(read) if attack_budget == MEASURED else []
    if floor_keys:
        notes += [FLOOR_NOTE, *baseline_notes(table, floor_keys, [c.metric for c in floored])]
    notes += _failure_notes(table, spec, attacks, attack_budget)
    return BuiltTable(spec, profile_name, _seeds(table, spec, present), header, body, numbers_frame, len(factors),
                      footnotes, missing, notes, attack_budget)


def budget_suffix(read: pd.DataFrame, attack: str | None, budget: AttackBudget) -> str:
    """`` ×16`` after an attack's name in a header at :data:`~bench.attack_knobs.MEASURED` (the budgets its
    shown cells ran at, ``/``-joined where settings differ); nothing at a single multiplier."""
    if budget != MEASURED or attack is None or attack in (WORST, PRIOR) or "attack_budget" not in read:
        return ""
    budgets = sorted(set(pd.to_numeric(read.loc[read["attack"] == attack, "attack_budget"], errors="coerce").fillna(1.0)))
    return " " + "/".join(f"×{b:g}" for b in budgets) if budgets else ""


def _missing_attack(table: pd.DataFrame, attack: str, budget: AttackBudget) -> str:
    """Why an attack's column is absent: no cell at all, or none at the budget read (naming those stored)."""
    mine = table[table["attack"] == attack]
    if mine.empty:
        return f"{attack_label(attack)} (no stored cell with attack '{attack}')"
    stored = sorted(set(pd.to_numeric(mine["attack_budget"], errors="coerce").fillna(1.0))) if "attack_budget" in mine else [1.0]
    at = ", ".join(f"×{b:g}" for b in stored)
    return (f"{attack_label(attack)} (no stored cell at {describe(budget)} or at the defaults of its other knobs; "
            f"stored at {at}: --attack-budget picks one, 'measured' each attack's measured budget)")


WORST_NOTE = ("Worst case: per row and seed, the most leaking {metric} of every image attack stored for that "
              "configuration (not only this table's attacks, each at every budget and setting stored), then mean ± CI "
              "over those seeds, absolute, with the attack strongest on the most seeds.")
FLOOR_NOTE = (f"{FLOOR_LABEL}: the prior attack's absolute value (the mean auxiliary image; it never reads the "
              "payload) on the same dataset, victim and cut, over every defense it ran under; an attack at or past "
              "it measured no leakage. A min-max column's floor is the prior's as-returned metric.")


def _failure_notes(table: pd.DataFrame, spec: TableSpec, attacks: set[str], attack_budget: AttackBudget) -> list[str]:
    """The configurations this table would show whose every stored cell failed or diverged
    (:func:`bench.report.failures.failure_notes`)."""
    shown = set(attacks)
    if any(c.attack is None for c in spec.columns):
        shown.add("none")
    if any(c.attack == WORST for c in spec.columns):
        shown |= image_attacks(table)
    rows = _keep(table[table["attack"].isin(shown)], spec.filters)
    return failure_notes(at_default_settings(rows, budget=attack_budget))


def _floor_line(place: tuple, factors: list[str], present: list[Column], floored: list[Column], floor: dict,
                spec: TableSpec, footnotes: list[str], numbers: list[dict]) -> list[str]:
    """The floor row of one (dataset, victim, cut): the prior's value in each image attack column."""
    label_at = "defense" if "defense" in factors else factors[0]
    keys = dict(zip(FLOOR_KEYS, place))
    line = [factor_value(f, keys[f]) if f in keys else FLOOR_LABEL if f == label_at else "" for f in factors]
    for col in present:
        metric = floor_metric(col.metric)
        r = floor.get((*place, metric)) if col in floored else None
        if col not in floored:
            line.append("")
        elif r is None:
            line.append(_mark((DASH, f"not recorded by the prior attack ({metric})"), footnotes))
        else:
            text = _cell_text({**r, "is_raw": True}, Column(PRIOR, metric, ABS), spec)
            line.append(text if isinstance(text, str) else _mark(text, footnotes))
            number_row = {**{f: keys.get(f) for f in factors}, "attack": PRIOR, **{k: r.get(k, math.nan) for k in NUMBER_COLUMNS[1:]}}
            if number_row not in numbers:
                numbers.append(number_row)
    return line


def _none(value: object) -> object:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _factors(configs: pd.DataFrame, rows: tuple[str, ...], fields: tuple[str, ...]) -> list[str]:
    """The spec's row factors plus every other factor that varies, so that no two rows coincide."""
    rows = tuple(f for f in rows if f in configs and configs[f].notna().any())  # a knob no shown cell sets: no column
    factors = [*rows, *(f for f in fields if f not in rows and configs[f].nunique() > 1)]
    if configs[factors].duplicated().any():  # e.g. a knob set in one row and unset in another
        factors += [f for f in fields if f not in factors and configs[f].nunique(dropna=False) > 1]
    return factors


def _mark(text: tuple[str, str], footnotes: list[str]) -> str:
    """``text`` with the superscript number of its footnote (added once)."""
    shown, reason = text
    if reason not in footnotes:
        footnotes.append(reason)
    return shown + str(footnotes.index(reason) + 1).translate(SUPERSCRIPTS)


def _seeds(table: pd.DataFrame, spec: TableSpec, present: list[Column]) -> tuple[int, ...]:
    """The seeds of the stored runs behind the shown columns."""
    rows = _keep(ok_rows(table), spec.filters)
    if not any(c.attack is None for c in present):
        shown = rows["attack"].isin([c.attack for c in present])
        rows = rows[shown | (rows["attack"].isin(image_attacks(rows)) if any(c.attack == WORST for c in present) else False)]
    return tuple(sorted(int(s) for s in rows["seed"].unique()))
