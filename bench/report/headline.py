"""The headline metric of each attack: the one number its leaderboard cells and convergence test quote.

Image attacks are read by SSIM; UnSplit by its released scoring, the min-max normalised foreground
MSE; the HAR probes by what they measure, the median per-feature R² of the reconstructed windows and
the subject re-identification accuracy.
"""
from __future__ import annotations

HEADLINE_METRICS: dict[str, str] = {"unsplit": "masked_mse_minmax", "har-recon": "median_r2", "har-reid": "reid_accuracy"}
DEFAULT_HEADLINE = "ssim"


def headline_metric(attack: str) -> str:
    """The headline metric of ``attack`` (SSIM unless :data:`HEADLINE_METRICS` names another)."""
    return HEADLINE_METRICS.get(attack, DEFAULT_HEADLINE)
