"""Tabular reconstruction metrics: per-feature R² and re-identification accuracy."""
from __future__ import annotations

from typing import Any

import numpy as np


def _as_numpy(values: Any) -> np.ndarray:
    """NumPy view of an array-like or (possibly GPU, grad-tracking) torch tensor."""
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    return np.asarray(values)


def per_feature_r2(recon: Any, truth: Any) -> np.ndarray:
    """Coefficient of determination of each feature (column), shape ``(n_features,)``.

    Features whose truth is constant over the samples have no defined R² (sklearn would report 1
    or 0 by convention); they get NaN here so that :func:`median_r2` leaves them out.

    Args:
        recon: Reconstructions ``(n_samples, n_features)`` (a 1-D input is one feature).
        truth: Ground truth of the same shape.
    """
    recon, truth = _as_numpy(recon).astype(np.float64), _as_numpy(truth).astype(np.float64)
    if recon.shape != truth.shape:
        raise ValueError(f"shape mismatch: {recon.shape} vs {truth.shape}")
    if truth.ndim == 1:
        recon, truth = recon[:, None], truth[:, None]
    if truth.ndim != 2 or len(truth) < 2:
        raise ValueError(f"expected (n_samples >= 2, n_features), got {truth.shape}")
    from sklearn.metrics import r2_score  # imported here: image cells never need scikit-learn

    scores = np.asarray(r2_score(truth, recon, multioutput="raw_values"), dtype=np.float64)
    constant = np.ptp(truth, axis=0) == 0
    scores[constant] = np.nan
    return scores


def median_r2(recon: Any, truth: Any) -> float:
    """Median over features of :func:`per_feature_r2`, constant-truth features excluded.

    Returns NaN when every feature is constant.
    """
    scores = per_feature_r2(recon, truth)
    finite = scores[~np.isnan(scores)]
    return float(np.median(finite)) if len(finite) else float("nan")


def reid_accuracy(pred_groups: Any, true_groups: Any) -> tuple[float, float]:
    """Top-1 re-identification accuracy and its chance level.

    Args:
        pred_groups: Predicted group (e.g. subject) per sample, shape ``(n,)``.
        true_groups: True group per sample, shape ``(n,)``.

    Returns:
        ``(accuracy, chance)``, chance being 1 / the number of distinct groups in ``true_groups``.
    """
    pred, true = _as_numpy(pred_groups).ravel(), _as_numpy(true_groups).ravel()
    if pred.shape != true.shape or len(true) == 0:
        raise ValueError(f"expected two non-empty label arrays of one length, got {pred.shape} and {true.shape}")
    return float(np.mean(pred == true)), 1.0 / len(np.unique(true))
