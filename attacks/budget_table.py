"""An attack's budget table: the budget it runs at on each measured setting, and the measurement behind it.

An attack declares ``budget_table`` on its class (empty on :class:`attacks.base.Attack`, as for a
submitted attack nobody has measured yet): one :class:`MeasuredBudget` per (profile, dataset, victim,
cut) where its convergence was measured
seed by seed (:mod:`bench.report.convergence`), each citing the results folder and the gains seen.
A grid asks for it with the budget ``"measured"`` (:data:`bench.attack_knobs.MEASURED`; ``--attack-budget measured`` or
``budget = "measured"`` in a grid file): :func:`measured_budget` resolves it per cell's setting. An
attack with nothing to scale (a closed form: no ``configs``) runs at 1 everywhere; an attack with no
entry for a setting is refused with one line, since no measurement says how long it must run there.
"""
from __future__ import annotations

from dataclasses import dataclass

from bench.profiles import PROFILES
from bench.report.verdicts import VERDICTS


@dataclass(frozen=True, kw_only=True)
class MeasuredBudget:
    """The budget an attack runs at on one setting, and what supports it.

    Attributes:
        profile: the profile measured (``cpu``, ``paper``).
        dataset: the dataset measured.
        victim: the victim measured.
        cut: the victim's cut measured.
        budget: the budget grids run the attack at there.
        verdict: the convergence rule's verdict at ``budget`` (one of
            :data:`bench.report.verdicts.VERDICTS`; ``unknown`` where four times it was not run).
        evidence: what was measured and where: the results folder, the budgets compared and each
            seed's gain.

    Raises:
        ValueError: an unknown profile or verdict, a budget outside (0, 1000], or evidence that
            names no results folder.
    """

    profile: str
    dataset: str
    victim: str
    cut: str
    budget: float
    verdict: str
    evidence: str

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"budget table: unknown profile '{self.profile}' (known: {', '.join(PROFILES)})")
        if self.verdict not in VERDICTS:
            raise ValueError(f"budget table: unknown verdict '{self.verdict}' (known: {', '.join(VERDICTS)})")
        if not 0 < self.budget <= 1000:
            raise ValueError(f"budget table: budget {self.budget} is outside (0, 1000]")
        if "results/" not in self.evidence:
            raise ValueError("budget table: the evidence must cite the results folder it was measured in")


class NoMeasuredBudget(LookupError):
    """The attack's budget table has no entry for the setting asked."""


def measured_entry(attack: type, *, profile: str, dataset: str, victim: str, cut: str) -> MeasuredBudget | None:
    """The attack class's budget table entry for this setting, or ``None`` where it has none."""
    return next((e for e in attack.budget_table if (e.profile, e.dataset, e.victim, e.cut) == (profile, dataset, victim, cut)),
                None)


def measured_budget(attack: type, *, name: str, profile: str, dataset: str, victim: str, cut: str) -> float:
    """The budget the attack class ``attack`` (registered as ``name``) runs at on this setting: its
    table's entry, 1 for a closed form (no ``configs``).

    Raises:
        NoMeasuredBudget: an attack with something to scale and no entry for the setting (one line,
            naming the settings it has).
    """
    if not attack.configs:
        return 1.0
    entry = measured_entry(attack, profile=profile, dataset=dataset, victim=victim, cut=cut)
    if entry is not None:
        return entry.budget
    have = "; ".join(f"{e.profile} {e.dataset} {e.victim}/{e.cut}" for e in attack.budget_table) or "none"
    raise NoMeasuredBudget(f"attack '{name}' has no measured budget on {profile} {dataset} {victim}/{cut} "
                           f"(its budget table has: {have}); give the budget as a number")
