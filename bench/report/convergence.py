"""Whether an attack has converged at its budget, read from cells stored at several budgets.

The rule (as ``benchmarks/convergence.py`` applies it to results/issue12-convergence): an attack has
converged at budget ``b`` when four times the budget buys at most a tolerance on its headline metric
(``Attack.headline_metric``, recorded on its rows: :func:`bench.run.table.headline_metrics`), the seed
means compared: ``SSIM_TOLERANCE`` in SSIM, else ``RELATIVE_TOLERANCE`` of the value at ``b``. A gain
is signed so that positive means the attack got stronger (leaks more). Without a stored ``4b`` the
question is not answered (``None``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from bench.report.labels import privacy_direction

SSIM_TOLERANCE = 0.02
RELATIVE_TOLERANCE = 0.05
BUDGET_FACTOR = 4.0


@dataclass(frozen=True)
class Convergence:
    """The verdict of one attack at one budget against four times that budget.

    Attributes:
        budget: the budget judged.
        larger: the budget it was compared with (``BUDGET_FACTOR`` × budget).
        gain: how much stronger the attack got at ``larger`` (metric units, positive: leaks more).
        tolerance: the largest gain that still counts as converged.
        converged: ``gain <= tolerance``.
    """

    budget: float
    larger: float
    gain: float
    tolerance: float
    converged: bool


def tolerance(metric: str, value: float) -> float:
    """The gain below which an attack counts as converged on ``metric`` at ``value``."""
    return SSIM_TOLERANCE if metric == "ssim" else RELATIVE_TOLERANCE * abs(value)


def convergence(means: dict[float, float], *, budget: float, metric: str) -> Convergence | None:
    """The verdict at ``budget`` from the seed means of ``metric`` per budget; ``None`` when
    ``BUDGET_FACTOR × budget`` is not stored, a mean is not finite or the metric has no privacy direction."""
    larger = budget * BUDGET_FACTOR
    low, high = means.get(budget), means.get(larger)
    direction = privacy_direction(metric)
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)) or not direction:
        return None
    gain = -direction * (high - low)  # a leakier value is lower where direction is −1
    allowed = tolerance(metric, low)
    return Convergence(budget=budget, larger=larger, gain=gain, tolerance=allowed, converged=gain <= allowed)
