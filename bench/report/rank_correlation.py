"""Do the attack-free measures agree with the worst case? Rank correlations across defenses.

For one dataset, victim and cut (one profile), each defense configuration (:func:`victim_fields`:
the defense and its knobs) has a seed mean of every attack-free measure
(:data:`bench.leakage.names.MEASURES`, the victim's own metrics) and a worst case over the image
attacks (:func:`bench.report.worst_case.worst_case`, the seed mean of the most leaking attack, as
the tables show it). Across the configurations where both are finite, :func:`rank_correlations`
gives Spearman's ρ and Kendall's τ-b (``scipy.stats``; two-sided p-values: Spearman's by
permutation, exact up to 7 configurations, Kendall's exact for small samples without ties) between
the measure, turned so that larger means more leakage (:data:`LEAKS_MORE`: the MSE bound 1/dFIL is
negated), and the worst case, turned the same way (SSIM as it is). ρ = +1: the measure ranks the
defenses exactly as the strongest attack does; −1: exactly reversed. Fewer than
:data:`MIN_CONFIGURATIONS` configurations, or a side equal on all of them, give no correlation
(NaN) and a note saying why.

:func:`build_rank_table` renders them as Table LEAKAGE-RANK; :func:`agreement_lines` as the block
``bench verify`` prints.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from bench.leakage.names import MEASURES
from bench.report.aggregate import aggregate, config_key, select_profile, victim_fields, victim_view
from bench.report.budgets import AttackBudget
from bench.report.floor import FLOOR_KEYS
from bench.report.labels import DATASET_LABELS, FACTOR_LABELS, MINUS, VICTIM_DIRECTION, metric_label, privacy_direction
from bench.report.table_specs import WORST, TableSpec
from bench.report.tables import DASH, BuiltTable, _mark
from bench.report.worst_case import worst_case

# +1: a larger value means the payload gives more of the input away; -1: less (the Cramér-Rao bound on the MSE).
# The opposite of the direction in which each is better for a defense (bench.report.labels.VICTIM_DIRECTION).
LEAKS_MORE = {m: -VICTIM_DIRECTION[m] for m in MEASURES}
MIN_CONFIGURATIONS = 3  # two points always rank alike or reversed: no evidence either way
PERMUTATIONS = 9999  # Spearman's p: every pairing up to 7 configurations (7! = 5040), else this many, seeded
COLUMNS = [*FLOOR_KEYS, "measure", "metric", "n", "spearman", "spearman_p", "kendall", "kendall_p", "note"]
TOO_FEW = "fewer than {min} defense configurations measure both (n = {n})"
CONSTANT = "the {side} is the same on every configuration: no ranking"


def rank_correlations(table: pd.DataFrame, *, metric: str = "ssim", profile: str | None = None) -> pd.DataFrame:
    """Per (dataset, victim, cut) and attack-free measure: how it ranks the defense configurations
    against the worst case on ``metric``.

    Args:
        table: the tidy table.
        metric: the worst case's privacy metric.
        profile: the profile to read (required when the table holds several).

    Returns:
        :data:`COLUMNS`: ``n`` the configurations where both are finite, ``spearman``/``kendall`` and
        their two-sided p-values (NaN, with the reason in ``note``, where there is no correlation).
        Empty where no measure or no worst case is stored.
    """
    table = select_profile(table, profile)
    measures = aggregate(victim_view(table), metrics=list(MEASURES)) if len(table) else pd.DataFrame()
    worst = worst_case(table, [metric])
    if measures.empty or worst.empty:
        return pd.DataFrame(columns=COLUMNS)
    fields = tuple(f for f in victim_fields(measures) if f in worst)
    leaked = dict(zip((config_key(r, fields) for r in worst.to_dict("records")), -privacy_direction(metric) * worst["mean"]))
    rows = []
    for place, mine in measures.groupby(list(FLOOR_KEYS), sort=True):
        for measure in (m for m in MEASURES if m in set(mine["metric"])):
            values = mine[mine["metric"] == measure].to_dict("records")
            keyed = ((r["mean"], config_key(r, fields)) for r in values)
            pairs = [(LEAKS_MORE[measure] * m, leaked[k]) for m, k in keyed
                     if k in leaked and math.isfinite(m) and math.isfinite(leaked[k])]
            rows.append({**dict(zip(FLOOR_KEYS, place)), "measure": measure, "metric": metric, **correlate(pairs)})
    return pd.DataFrame(rows, columns=COLUMNS)


def correlate(pairs: list[tuple[float, float]]) -> dict:
    """``n``, Spearman's and Kendall's coefficients with their p-values, or NaNs and a ``note``."""
    n = len(pairs)
    nothing = {"n": n, "spearman": math.nan, "spearman_p": math.nan, "kendall": math.nan, "kendall_p": math.nan}
    if n < MIN_CONFIGURATIONS:
        return {**nothing, "note": TOO_FEW.format(min=MIN_CONFIGURATIONS, n=n)}
    x, y = np.array(pairs).T
    for side, values in (("measure", x), ("worst case", y)):
        if np.ptp(values) == 0:
            return {**nothing, "note": CONSTANT.format(side=side)}
    ranked = stats.rankdata(y)

    def spearman(values: np.ndarray, axis: int = -1) -> np.ndarray:  # Pearson's r of the ranks, batched
        a = stats.rankdata(values, axis=axis)
        a, b = a - a.mean(axis=axis, keepdims=True), ranked - ranked.mean()
        return (a * b).sum(axis=axis) / np.sqrt((a * a).sum(axis=axis) * (b * b).sum())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        test = stats.permutation_test((x,), spearman, permutation_type="pairings", vectorized=True,
                                      n_resamples=PERMUTATIONS, random_state=0)
        tau, tau_p = stats.kendalltau(x, y)
    return {"n": n, "spearman": float(test.statistic), "spearman_p": float(test.pvalue), "kendall": float(tau),
            "kendall_p": float(tau_p), "note": None}


def _signed(value: float) -> str:
    return f"{value:+.2f}".replace("-", MINUS)


def _p(value: float) -> str:
    return f"{value:.3f}" if value >= 0.001 else "< 0.001"


class RankTable(BuiltTable):
    """Table LEAKAGE-RANK: a row per (dataset, victim, cut, measure) with data, no seeds of its own."""

    @property
    def has_defended_rows(self) -> bool:
        return bool(len(self.numbers))

    @property
    def caption(self) -> str:
        title = self.spec.title + ("" if self.spec.title.endswith("?") else ".")
        return f"Table {self.spec.name}: {title} {self.spec.caption} Profile '{self.profile}'."


def build_rank_table(table: pd.DataFrame, spec: TableSpec, profile: str | None = None, *,
                     attack_budget: AttackBudget = 1.0) -> RankTable:
    """Table LEAKAGE-RANK of ``table``: :func:`rank_correlations` on the metric of ``spec``'s worst-case
    column (the attack budget changes nothing: the worst case reads every budget stored)."""
    table = select_profile(table, profile)
    metric = next(c.metric for c in spec.columns if c.attack == WORST)
    found = rank_correlations(table, metric=metric)
    header = [("", FACTOR_LABELS.get(f, f)) for f in FLOOR_KEYS] + [("", "Measure")]
    header += [("Spearman", "ρ"), ("Spearman", "p"), ("Kendall", "τ"), ("Kendall", "p"), ("", "n")]
    footnotes: list[str] = []
    body = []
    for r in found.to_dict("records"):
        line = [DATASET_LABELS.get(r["dataset"], r["dataset"]), r["victim"], r["cut"], metric_label(r["measure"])]
        if isinstance(r["note"], str):
            dash = _mark((DASH, r["note"]), footnotes)
            line += [dash, "", dash, ""]
        else:
            line += [_signed(r["spearman"]), _p(r["spearman_p"]), _signed(r["kendall"]), _p(r["kendall_p"])]
        body.append(line + [str(r["n"])])
    notes = [f"n: the configurations where both the measure and the worst-case {metric_label(metric).rstrip(' ↑↓')} are "
             f"finite (no correlation from fewer than {MIN_CONFIGURATIONS}); p: two-sided, Spearman's by permutation "
             f"(every pairing up to 7 configurations, else {PERMUTATIONS:,} seeded ones), Kendall's τ-b exact without "
             f"ties (scipy.stats)."] if body else []
    profile_name = str(table["profile"].iloc[0]) if len(table) else (profile or "")
    columns = [f"{g}: {m}" if g else m for g, m in header]
    return RankTable(spec, profile_name, (), header, pd.DataFrame(body, columns=columns), found.assign(attack=WORST),
                     len(FLOOR_KEYS) + 1, footnotes, [] if body else ["rank correlations (no configuration stores both an "
                                                                       "attack-free measure and an image attack)"], notes,
                     attack_budget)


def agreement_lines(table: pd.DataFrame, *, metric: str = "ssim", profile: str | None = None) -> list[str]:
    """``bench verify``'s block: a heading and one line per (dataset, victim, cut, measure); empty
    where :func:`rank_correlations` finds nothing to compare."""
    found = rank_correlations(table, metric=metric, profile=profile)
    if found.empty:
        return []
    lines = [f"do attack-free measures agree with the worst case? Rank correlation across defense configurations of "
             f"each measure (larger = more leakage; the MSE bound negated) with the worst-case {metric}:"]
    for r in found.to_dict("records"):
        where = f"{r['dataset']} {r['victim']}/{r['cut']}: {r['measure']}"
        if isinstance(r["note"], str):
            lines.append(f"  {where}: no correlation, {r['note']}")
        else:
            lines.append(f"  {where}: Spearman ρ {_signed(r['spearman'])} (p {_p(r['spearman_p'])}), Kendall τ "
                         f"{_signed(r['kendall'])} (p {_p(r['kendall_p'])}), n = {r['n']} configurations")
    return lines
