"""Whether an attack has converged at its budget, judged seed by seed on the same trained victims.

The rule (issue 39): an attack has converged at budget ``b`` when, on every trained victim stored
at both ``b`` and ``BUDGET_FACTOR × b`` (one configuration and seed: its ``victim_key``), the
larger budget gains at most a tolerance on the attack's headline metric (``Attack.headline_metric``,
recorded on its rows): ``SSIM_TOLERANCE`` in SSIM, else ``RELATIVE_TOLERANCE`` of that seed's value
at ``b``. A gain is signed so that positive means the attack got stronger (leaks more). Verdicts:

- **unstable**: some seed *falls* by more than the tolerance at the larger budget. More budget does
  not reliably help, so the number at ``b`` is no estimate of the attack's strength in either
  direction; this wins over "not converged" (running longer is not the remedy).
- **not converged**: no seed falls beyond the tolerance, but some seed still gains beyond it.
- **converged**: every paired seed's gain is within the tolerance either way.
- **unknown**: ``BUDGET_FACTOR × b`` is not stored on any seed stored at ``b`` (e.g. ``b`` is the
  highest budget stored), or the metric has no privacy direction.

Seeds stored at ``b`` without a partner at the larger budget are counted (``unpaired``) but never
judged; means over seeds are never compared (they hide one seed's climb behind another's collapse).
Runs flagged as diverged count like any other (a collapse at the larger budget is what the rule is
there to catch); only non-finite values are left out.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from bench.attack_knobs import MEASURED
from bench.report.aggregate import at_default_settings, ok_rows, plain_key
from bench.report.budgets import AttackBudget, parts_at
from bench.report.labels import MINUS, privacy_direction
from bench.report.verdicts import CONVERGED, NOT_CONVERGED, UNKNOWN, UNSTABLE
from bench.run.table import with_attack_facts

SSIM_TOLERANCE = 0.02
RELATIVE_TOLERANCE = 0.05
BUDGET_FACTOR = 4.0
MARKS = {CONVERGED: "", NOT_CONVERGED: "†", UNSTABLE: "‡", UNKNOWN: "°"}  # a table cell's mark per verdict
MEANINGS = {NOT_CONVERGED: "not converged (a seed still gains beyond the tolerance at {larger})",
            UNSTABLE: "unstable (a seed falls beyond the tolerance at {larger})",
            UNKNOWN: "unknown ({larger} not stored on these seeds)"}
Pair = tuple[int, str]  # (seed, victim_key): one trained victim


@dataclass(frozen=True)
class SeedGain:
    """One trained victim's values at a budget and at ``BUDGET_FACTOR`` times it."""

    seed: int
    victim_key: str
    value: float
    larger_value: float
    gain: float
    tolerance: float

    @property
    def verdict(self) -> str:
        if self.gain < -self.tolerance:
            return UNSTABLE
        return NOT_CONVERGED if self.gain > self.tolerance else CONVERGED


@dataclass(frozen=True)
class Convergence:
    """The verdict of one attack at one budget against ``BUDGET_FACTOR`` times that budget.

    Attributes:
        budget: the budget judged.
        larger: the budget it was compared with.
        metric: the headline metric compared.
        verdict: one of :data:`bench.report.verdicts.VERDICTS`.
        seeds: the gain of every seed stored at both budgets, by seed.
        unpaired: seeds stored at ``budget`` whose victim has no value at ``larger``.
    """

    budget: float
    larger: float
    metric: str
    verdict: str
    seeds: tuple[SeedGain, ...] = ()
    unpaired: int = 0

    @property
    def converged(self) -> bool:
        return self.verdict == CONVERGED

    @property
    def mark(self) -> str:
        return MARKS[self.verdict]

    def describe(self) -> str:
        """``unstable at ×4 (×16 gains +0.0660, +0.0800, −0.1260 on seeds 0, 1, 2; tolerance 0.02)``."""
        head = f"{self.verdict} at ×{self.budget:g}"
        if not self.seeds:
            return f"{head} (×{self.larger:g} not stored on its seeds)"
        gains = ", ".join(f"{g.gain:+.4f}".replace("-", MINUS) for g in self.seeds)
        seeds = ", ".join(str(g.seed) for g in self.seeds)
        allowed = f"{SSIM_TOLERANCE:g}" if self.metric == "ssim" else f"{RELATIVE_TOLERANCE:.0%} of each seed's value"
        missing = f"; {self.unpaired} seed{'s' * (self.unpaired != 1)} without ×{self.larger:g}" if self.unpaired else ""
        return (f"{head} (×{self.larger:g} gains {gains} {self.metric} on seed{'s' * (len(self.seeds) != 1)} {seeds}; "
                f"tolerance {allowed}{missing})")


def tolerance(metric: str, value: float) -> float:
    """The largest gain (or fall) that still counts as converged on ``metric`` for a seed at ``value``."""
    return SSIM_TOLERANCE if metric == "ssim" else RELATIVE_TOLERANCE * abs(value)


def judge(at_budget: Mapping[Pair, float], at_larger: Mapping[Pair, float], *, budget: float, metric: str) -> Convergence:
    """The verdict at ``budget`` from each trained victim's value there and at ``BUDGET_FACTOR × budget``.

    Args:
        at_budget: ``{(seed, victim_key): value}`` of the headline metric at ``budget``.
        at_larger: the same at the larger budget (empty where it is not stored).
        budget: the budget judged.
        metric: the headline metric (its privacy direction signs the gains).

    Returns:
        The verdict with every paired seed's gain (non-finite values are not paired).
    """
    larger = budget * BUDGET_FACTOR
    finite = {k: v for k, v in at_budget.items() if math.isfinite(v)}
    paired = sorted(k for k in finite if k in at_larger and math.isfinite(at_larger[k]))
    direction = privacy_direction(metric)
    if not paired or not direction:
        return Convergence(budget, larger, metric, UNKNOWN, unpaired=len(finite) - len(paired))
    seeds = tuple(SeedGain(int(seed), str(key), float(finite[(seed, key)]), float(at_larger[(seed, key)]),
                           gain=float(-direction * (at_larger[(seed, key)] - finite[(seed, key)])),  # leakier is lower where −1
                           tolerance=float(tolerance(metric, finite[(seed, key)])))
                  for seed, key in paired)
    verdicts = {g.verdict for g in seeds}
    verdict = UNSTABLE if UNSTABLE in verdicts else NOT_CONVERGED if NOT_CONVERGED in verdicts else CONVERGED
    return Convergence(budget, larger, metric, verdict, seeds, unpaired=len(finite) - len(paired))


def judge_cells(rows: pd.DataFrame, *, by: Sequence[str] = ()) -> pd.DataFrame:
    """Every stored budget of every attacked configuration of ``rows`` judged by :func:`judge`.

    Args:
        rows: tidy rows of attack cells at any budgets (victims' rows, failed cells and other metrics
            are skipped); each attack's headline metric is the one its rows record.
        by: the columns that make one configuration (the attack is always one); cells of a
            configuration are paired across budgets by ``(seed, victim_key)`` (the seed alone where no
            victim key is recorded).

    Returns:
        One row per (configuration, budget stored): the ``by`` columns, ``attack``, ``budget`` and
        ``convergence`` (a :class:`Convergence`).
    """
    by = [*by, *(["attack"] if "attack" not in by else [])]
    columns = [*by, "budget", "convergence"]
    rows = ok_rows(with_attack_facts(rows))
    rows = rows[(rows["attack"] != "none") & (rows["metric"] == rows["headline_metric"])]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    budgets = pd.to_numeric(rows["attack_budget"], errors="coerce") if "attack_budget" in rows else None
    # Without a recorded victim key, (configuration, seed) names the victim.
    victims = rows["victim_key"].fillna("").astype(str) if "victim_key" in rows else ""
    rows = rows.assign(_budget=1.0 if budgets is None else budgets.fillna(1.0), _seed=rows["seed"].astype(int),
                       _victim=victims)[[*by, "headline_metric", "_budget", "_seed", "_victim", "value"]]
    # One grouping for every configuration, budget and victim (a grouping per configuration cost seconds).
    means = rows.groupby([*by, "_budget", "_seed", "_victim"], dropna=False, sort=True).agg(
        value=("value", "mean"), metric=("headline_metric", "first"))
    configurations: dict[tuple, tuple[tuple, str, dict[float, dict]]] = {}  # NaN never equals itself: plain keys
    for index, value, metric in zip(means.index, means["value"], means["metric"]):
        key, (budget, seed, victim) = index[:len(by)], index[len(by):]
        _, _, values = configurations.setdefault(plain_key(key), (key, str(metric), {}))
        values.setdefault(budget, {})[(seed, victim)] = value
    out = []
    for key, metric, values in configurations.values():
        for budget, at_budget in sorted(values.items()):
            verdict = judge(at_budget, values.get(budget * BUDGET_FACTOR, {}), budget=float(budget), metric=metric)
            out.append({**dict(zip(by, key)), "budget": float(budget), "convergence": verdict})
    return pd.DataFrame(out, columns=columns)


def judge_at(rows: pd.DataFrame, *, by: Sequence[str] = (), budget: AttackBudget = 1.0) -> pd.DataFrame:
    """:func:`judge_cells` of the attack cells a table or claim reads at ``budget``: those at the default of
    every other tuning knob (:func:`bench.report.aggregate.at_default_settings`), paired with theirs at
    ``BUDGET_FACTOR × budget``; one row per configuration, at ``budget`` only (at
    :data:`~bench.attack_knobs.MEASURED`: each attack and setting at its own measured budget)."""
    if budget == MEASURED:
        judged = [judge_at(part, by=by, budget=b) for b, part in parts_at(rows, budget)]
        judged = [j for j in judged if len(j)]
        return pd.concat(judged, ignore_index=True) if judged else judge_cells(rows.iloc[0:0], by=by)
    rows = pd.concat([at_default_settings(rows, budget=budget), at_default_settings(rows, budget=budget * BUDGET_FACTOR)])
    judged = judge_cells(rows, by=by)
    return judged[judged["budget"] == budget].reset_index(drop=True)


def legend(verdicts: Sequence[str], *, budget: AttackBudget) -> str:
    """The note under a table: how its attack columns were judged and what each mark used means."""
    if budget == MEASURED:
        at, larger = "at its measured budget (in its column's header)", f"{BUDGET_FACTOR:g}× that budget"
    else:
        at, larger = f"at ×{budget:g}", f"×{budget * BUDGET_FACTOR:g}"
    used = [v for v in (NOT_CONVERGED, UNSTABLE, UNKNOWN) if v in verdicts]
    rule = (f"Convergence of each attack {at}: {larger if budget == MEASURED else larger + ' its budget'} against it, "
            f"seed by seed on the same victims, on its headline metric (tolerance {SSIM_TOLERANCE:g} SSIM, else "
            f"{RELATIVE_TOLERANCE:.0%})")
    if not used:
        return f"{rule}: every attack column converged."
    marks = "; ".join(f"{MARKS[v]} {MEANINGS[v].format(larger=larger)}" for v in used)
    return f"{rule}: {marks}; unmarked: converged."
