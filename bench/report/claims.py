"""Checks the paper's claims (:mod:`bench.report.paper_claims`) against stored results: ``bench verify``.

A claim is either a *value* (a cell's metric equals the paper's number within a tolerance, meant for
the ``paper`` profile) or an *ordering* (one configuration beats another on a metric, which is what
a scaled-down ``cpu`` run can test). Means are over seeds of converged runs (diverged runs left out).

Verdicts (:data:`VERDICTS`), decided in this order:

- **not testable**: a side has no stored cell or no finite value, or a side names a nominal CR ``c``
  that its defense does not reach on this victim: the mean ``realized_cr`` of its cells (else of
  its victim's cells) differs from ``c`` by more than 1% (e.g. learned 1×1 capped at a realised
  CR of 8 cannot test a claim at CR 16 or 32).
- **no leakage measured**: a privacy-gain claim (:func:`privacy_gain_side`: an ordering on a
  privacy metric between two configurations under the same image attack) whose more private side,
  as the claim states it, is within noise of the floor: the ``prior`` attack's cells on the same
  dataset, victim and cut, any defense, per-seed means; the noise rule is
  :func:`bench.report.floor.leakage_gap` (gap ``d·(prior − attack) ≤ 2·SE`` of the two seed
  means: within noise of the floor, or worse than it). The attack measured nothing on that
  configuration beyond a guess that never reads the payload, so the ordering says nothing about
  the defense. Without prior cells this check is skipped.
- **within noise**: an ordering whose two sides' means are closer than the noise of their
  difference: ``|margin| ≤ 2·SE`` with ``margin`` the mean left side's distance past the target
  ``factor · mean(right) + offset`` in the claim's direction and ``SE = √(s_l²/n_l + factor²·s_r²/n_r)``
  (:func:`bench.report.floor.difference_noise`: unpaired, the floor's rule). The seeds neither support nor
  refute the claim; the detail says which way the means lean.
- **held** / **not held**: the comparison itself, beyond that noise.

Every testable claim that reads an attack's cells also carries that attack's convergence verdict
at the budget read, per side (:func:`bench.report.convergence.judge_at`: seed by seed on the same
victims); a claim resting on an attack not converged (not converged, unstable or unknown) says so.
The verdict does not change the claim's status.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from bench.report.aggregate import at_default_settings, diverged_cells, not_learned_cells, t_halfwidth, victim_view
from bench.report.budgets import AttackBudget
from bench.report.convergence import Convergence, judge_at
from bench.report.floor import FLOOR_KEYS, PRIOR, difference_noise, floor_metric, leakage_gap, prior_seed_values
from bench.report.labels import privacy_direction
from bench.report.paper_claims import CLAIMS, Claim, Selector
from bench.report.worst_case import image_attacks

HELD, NOT_HELD, WITHIN_NOISE = "held", "not held", "within noise"
NO_LEAKAGE, NOT_TESTABLE = "no leakage measured", "not testable"
VERDICTS = (HELD, NOT_HELD, WITHIN_NOISE, NO_LEAKAGE, NOT_TESTABLE)  # the order ``bench verify`` counts them in
CR_TOLERANCE = 0.01  # a realised CR within 1% of the nominal one tests the claim


def left_out_cells(table: pd.DataFrame) -> set[str]:
    """Ids of the cells no claim reads: diverged runs and those whose victim did not learn. Each is a
    property of its cell alone, so the set for a whole table serves every selection of its cells."""
    return diverged_cells(table) | not_learned_cells(table)


def _values(table: pd.DataFrame, selector: Selector, metric: str, *, left_out: set[str] | None = None) -> pd.DataFrame:
    """The finite values of ``metric`` for ``selector``, leaving out diverged runs and those whose victim
    did not learn (rows of the table); ``left_out``: :func:`left_out_cells` of ``table``, when known."""
    rows = at_default_settings(table[selector.mask(table) & (table["status"] == "ok")])
    left_out = left_out_cells(rows) if left_out is None else left_out
    values = rows[(rows["metric"] == metric) & ~rows["cell_id"].isin(left_out)]
    return values[values["value"].notna()]


def _why_missing(table: pd.DataFrame, selector: Selector, metric: str) -> str:
    """Why ``selector`` has no value of ``metric`` to test: no cell, only cells no claim reads (their
    victim did not learn, or a run diverged), or no finite value."""
    label = selector.label()
    rows = at_default_settings(table[selector.mask(table) & (table["status"] == "ok")])
    if rows.empty:
        return f"no stored {label} cells"
    finite = rows[(rows["metric"] == metric) & rows["value"].notna()]
    if finite.empty:
        return f"no finite {metric} in the stored {label} cells"
    unlearned = not_learned_cells(rows)
    if set(finite["cell_id"]) <= unlearned:
        return f"every stored {label} victim did not learn (accuracy within noise of chance), so no claim reads it"
    return f"every stored {label} run diverged"


def _seed_values(table: pd.DataFrame, selector: Selector, metric: str, *, left_out: set[str] | None = None) -> np.ndarray:
    """The values of :func:`_values` as an array."""
    return _values(table, selector, metric, left_out=left_out)["value"].to_numpy(dtype=float)


def _mean_of(values: np.ndarray) -> float | None:
    return float(values.mean()) if len(values) else None


def _mean(table: pd.DataFrame, selector: Selector, metric: str, *, left_out: set[str] | None = None) -> tuple[float | None, int]:
    """Mean over seeds of ``metric`` for ``selector``, leaving out diverged runs."""
    values = _seed_values(table, selector, metric, left_out=left_out)
    return _mean_of(values), len(values)


def _described(values: np.ndarray) -> str:
    """``mean ±h (n=…)``: the seed mean with the half-width of its 95% t-interval (none for n = 1)."""
    n = len(values)
    if n < 2:
        return f"{values.mean():.4f} (n={n}, no CI)"
    return f"{values.mean():.4f} ±{t_halfwidth(values):.4f} (n={n})"


def unreached_cr(table: pd.DataFrame, selector: Selector, *, left_out: set[str] | None = None) -> str | None:
    """Why ``selector`` cannot be tested when its defense does not reach its nominal CR (else None):
    the mean ``realized_cr`` of its cells, else of its victim's cells (attack ``none``), differs from
    the nominal CR by more than :data:`CR_TOLERANCE`. No stored ``realized_cr``: None."""
    if selector.cr is None:
        return None
    for attack in dict.fromkeys((selector.attack, "none")):
        realised, _ = _mean(table, replace(selector, attack=attack), "realized_cr", left_out=left_out)
        if realised is not None:
            if abs(realised - selector.cr) > CR_TOLERANCE * selector.cr:
                return (f"{selector.label()}: {selector.defense} reaches a realised CR of {realised:g} on this victim, "
                        f"not the nominal {selector.cr:g} the claim is made at")
            return None
    return None


def privacy_gain_side(claim: Claim, image_attack_names: Collection[str]) -> Selector | None:
    """The side a privacy-gain claim says is more private (None for any other claim): an ordering on a
    metric with a privacy direction whose two sides name the same image attack (one of
    ``image_attack_names``: :func:`bench.report.worst_case.image_attacks` of the stored rows); the
    left side when the relation points toward privacy (``<`` on SSIM, ``>`` on MSE), else the right."""
    if claim.relation == "≈" or claim.right is None or not privacy_direction(claim.metric):
        return None
    if claim.left.attack != claim.right.attack or claim.left.attack not in image_attack_names:
        return None
    toward_privacy = (claim.relation == ">") == (privacy_direction(claim.metric) > 0)
    return claim.left if toward_privacy else claim.right


def at_floor(table: pd.DataFrame, selector: Selector, metric: str, *, left_out: set[str] | None = None) -> str | None:
    """The detail when ``selector``'s attack measured no leakage on ``metric`` (within noise of the
    floor, or worse than it); None when it beat the floor or no prior cell matches its cells'
    dataset, victim and cut."""
    attack = _values(table, selector, metric, left_out=left_out)
    prior = prior_seed_values(table)
    if attack.empty or prior.empty:
        return None
    places = set(attack[list(FLOOR_KEYS)].itertuples(index=False, name=None))
    prior = prior[(prior["metric"] == floor_metric(metric))
                  & pd.Series(list(zip(*(prior[k] for k in FLOOR_KEYS))), index=prior.index).isin(places)]
    seeds = prior.groupby("seed")["value"].mean().dropna()
    if seeds.empty:
        return None
    gap, noise = leakage_gap(attack["value"].to_numpy(), seeds.to_numpy(), metric)
    if gap > noise:
        return None
    return (f"{metric}: {selector.label()} {attack['value'].mean():.4f} (n={len(attack)}) vs the floor (prior "
            f"{floor_metric(metric)}) {seeds.mean():.4f} (n={len(seeds)}): gap past the floor {gap:+.4f} ≤ 2·SE {noise:.4f}")


@dataclass(frozen=True)
class Verdict:
    """A claim's status on one part of the results; ``convergence``: ``(side label, verdict)`` of each
    side that reads an attack's cells (empty for a claim not testable or on the victims alone)."""

    claim: Claim
    status: str
    detail: str
    dataset: str = ""
    convergence: tuple[tuple[str, Convergence], ...] = ()

    @property
    def on_converged_attacks(self) -> bool:
        return all(c.converged for _, c in self.convergence)

    def convergence_note(self) -> str:
        """What the claim's attacks' convergence says (empty without one), e.g. ``rests on an attack not
        converged: raw / sdar unstable at ×4 (…)``."""
        if not self.convergence:
            return ""
        sides = "; ".join(f"{label} {c.describe()}" for label, c in self.convergence)
        return f"attacks converged: {sides}" if self.on_converged_attacks else f"rests on an attack not converged: {sides}"


def verify(table: pd.DataFrame, profile: str, claims: list[Claim] = CLAIMS, *, attack_budget: AttackBudget = 1.0) -> list[Verdict]:
    """Check every claim registered for ``profile`` against the stored results of that profile, on
    each stored dataset, victim and cut separately (a claim comparing cuts: each victim; verdicts as
    the module says). A claim pinned to a dataset is checked on that dataset only, and is not
    testable when none of its cells is stored. The attacks are read at ``attack_budget`` (the prior,
    which reads no payload, at whatever budget it ran)."""
    table = table[table["profile"] == profile]
    budgets = table  # every budget, for the convergence verdicts
    # Utility claims read the victims (attack ``none``), whose metrics every attack cell also stores,
    # at whatever budget it ran.
    table = pd.concat([_at_budget(table[table["attack"] != "none"], attack_budget), victim_view(table)],
                      ignore_index=True)
    claims = [c for c in claims if profile in c.profiles]
    stored = sorted(table["dataset"].dropna().unique()) if not table.empty else []
    verdicts = []
    for dataset in stored:
        mine = [c for c in claims if c.left.dataset in (None, dataset)]
        for where, cells, theirs in _settings(table[table["dataset"] == dataset], mine):
            stored_part = budgets[budgets["dataset"].eq(dataset) & budgets["victim"].isin(set(cells["victim"]))
                                  & budgets["cut"].isin(set(cells["cut"]))]
            verdicts += [replace(v, dataset=where, convergence=_convergence(stored_part, v, attack_budget))
                         for v in _verify_one(cells, theirs)]
    for claim in claims:
        if stored and claim.left.dataset is not None and claim.left.dataset not in stored:
            verdicts.append(Verdict(claim, NOT_TESTABLE, f"no stored {claim.left.dataset} cells", claim.left.dataset))
    return verdicts


def _at_budget(table: pd.DataFrame, budget: AttackBudget) -> pd.DataFrame:
    """The prior's rows and the other attacks' at ``budget``, these relabelled as the default budget,
    which every reader of a claim takes (victims' rows, attack ``none``, are kept as they are)."""
    if budget == 1.0:
        return table
    if "attack_budget" not in table:
        return table[table["attack"].isin(["none", PRIOR])]
    kept = at_default_settings(table[table["attack"] != PRIOR], budget=budget).copy()
    kept.loc[kept["attack"] != "none", "attack_budget"] = 1.0
    return pd.concat([kept, table[table["attack"] == PRIOR]], ignore_index=True)


def _convergence(table: pd.DataFrame, verdict: Verdict, budget: AttackBudget) -> tuple[tuple[str, Convergence], ...]:
    """The convergence at ``budget`` of each side of a testable claim that reads an attack (not the
    prior's floor), on the cells the claim reads: every budget of ``table``, victims that learned."""
    if verdict.status == NOT_TESTABLE:
        return ()
    learned = table[~table["cell_id"].isin(not_learned_cells(table))]
    out = []
    for side in dict.fromkeys((verdict.claim.left, verdict.claim.right)):  # a side named twice is judged once
        if side is None or side.attack in ("none", PRIOR):
            continue
        judged = judge_at(learned[side.mask(learned)], budget=budget)
        if len(judged):
            out.append((side.label(), judged["convergence"].iloc[0]))
    return tuple(out)


def _names_cut(claim: Claim) -> bool:
    return any(s is not None and s.cut is not None for s in (claim.left, claim.right))


def _settings(table: pd.DataFrame, claims: list[Claim]) -> list[tuple[str, pd.DataFrame, list[Claim]]]:
    """One dataset's cells split so that no claim pools victims or cuts: a claim that names no cut is
    checked on each (victim, cut) apart, one that names its cuts on each victim apart. Each part is
    labelled by the dataset, plus the victim (and cut) where the dataset has several."""
    dataset = table["dataset"].iloc[0]
    pairs = sorted(table[["victim", "cut"]].drop_duplicates().itertuples(index=False, name=None))
    victims = sorted({victim for victim, _ in pairs})
    cut_free = [c for c in claims if not _names_cut(c)]
    cut_named = [c for c in claims if _names_cut(c)]
    out = [(dataset if len(pairs) == 1 else f"{dataset} {victim}/{cut}",
            table[(table["victim"] == victim) & (table["cut"] == cut)], cut_free) for victim, cut in pairs]
    out += [(dataset if len(victims) == 1 else f"{dataset} {victim}", table[table["victim"] == victim], cut_named)
            for victim in victims]
    return [part for part in out if part[2]]


def _verify_one(table: pd.DataFrame, claims: list[Claim]) -> list[Verdict]:
    """The verdicts of ``claims`` on one part of a dataset's cells (one victim and cut, or one victim)."""
    verdicts = []
    left_out = left_out_cells(table)
    image_attack_names = image_attacks(table)
    for claim in claims:
        left_values = _seed_values(table, claim.left, claim.metric, left_out=left_out)
        left = _mean_of(left_values)
        unreached = next(filter(None, (unreached_cr(table, s, left_out=left_out) for s in (claim.left, claim.right) if s is not None)),
                         None)
        if unreached is not None:
            verdicts.append(Verdict(claim, NOT_TESTABLE, unreached))
            continue
        if claim.relation == "≈":
            if left is None:
                verdicts.append(Verdict(claim, NOT_TESTABLE, f"no stored {claim.left.label()} cells"))
                continue
            ok = abs(left - claim.value) <= claim.tolerance
            verdicts.append(Verdict(claim, HELD if ok else NOT_HELD, f"{claim.metric} "
                                    f"{_described(left_values)} vs paper {claim.value} ± {claim.tolerance}"))
            continue
        right_values = _seed_values(table, claim.right, claim.metric, left_out=left_out)
        right = _mean_of(right_values)
        if left is None or right is None:
            missing = claim.left if left is None else claim.right
            verdicts.append(Verdict(claim, NOT_TESTABLE, _why_missing(table, missing, claim.metric)))
            continue
        target = claim.factor * right + claim.offset
        ok = left < target if claim.relation == "<" else left > target
        scale = (f"{claim.factor:g}×" if claim.factor != 1 else "") + (f"(+{claim.offset:g}) " if claim.offset else "")
        right_text = f"{claim.right.label()} {_described(right_values)}"
        if claim.factor == 0:  # a constant threshold: the right side plays no part
            right_text = f"{claim.offset:g}"
        elif claim.factor != 1 or claim.offset:
            right_text = f"{claim.right.label()} {target:.4f} = {scale}{_described(right_values)}"
        detail = f"{claim.metric}: {claim.left.label()} {_described(left_values)} {claim.relation} {right_text}"
        side = privacy_gain_side(claim, image_attack_names)
        floor = at_floor(table, side, claim.metric, left_out=left_out) if side is not None else None
        if floor is not None:
            verdicts.append(Verdict(claim, NO_LEAKAGE, f"{floor}; the claim's comparison: {detail}"))
            continue
        margin = target - left if claim.relation == "<" else left - target
        noise = difference_noise(left_values, right_values, claim.factor)
        if abs(margin) <= noise:
            verdicts.append(Verdict(claim, WITHIN_NOISE, f"{detail}; the means lean {HELD if ok else NOT_HELD}, "
                                    f"by {margin:+.4f} ≤ 2·SE {noise:.4f}"))
            continue
        verdicts.append(Verdict(claim, HELD if ok else NOT_HELD, detail))
    return verdicts
