"""Label-inference metrics: how well an attack's per-class scores name the targets' true labels.

An attack that infers labels returns ``(n, classes)`` scores, higher meaning more likely
(:attr:`attacks.base.AttackOutput.label_scores`); the bench, which keeps the truth, scores them here:

- ``label_auc_mean``: the one-vs-rest ROC AUC of each class's score column, averaged over the
  classes present among the targets (a class absent from them, or the only one present, has no
  AUC and is skipped; ``label_auc_classes`` counts those averaged);
- ``label_accuracy``: top-1 accuracy of the row-wise highest score, where the attack's scores make
  one class decision per sample (norm scoring's do not: :attr:`~attacks.base.AttackOutput.label_top1`);
- their chance levels on the row: ``label_chance_auc`` 0.5 (any score that ignores the sample) and
  ``label_chance_accuracy``, the share of the targets' most common class (what always guessing that
  class scores; at least ``1 / classes``, equal to it for balanced targets).
"""
from __future__ import annotations

from typing import Any

import numpy as np

LABEL_AUC = "label_auc_mean"
LABEL_ACCURACY = "label_accuracy"
LABEL_METRICS = (LABEL_AUC, LABEL_ACCURACY)  # the headline metrics of a label attack
CHANCE_AUC = 0.5


def _as_numpy(values: Any) -> np.ndarray:
    if hasattr(values, "detach"):
        values = values.detach().float().cpu().numpy()
    return np.asarray(values)


def label_metrics(scores: Any, truth: Any, *, num_classes: int, top1: bool = True) -> tuple[dict[str, float | None], dict[str, str]]:
    """The label metrics of ``scores`` against ``truth``, with their chance levels and notes.

    Args:
        scores: ``(n, num_classes)`` per-class scores of the targets, higher = more likely.
        truth: ``(n,)`` true labels in ``[0, num_classes)``.
        num_classes: the number of classes.
        top1: whether each row's highest score is the attack's class decision (else no accuracy).

    Returns:
        ``label_auc_mean``, ``label_auc_classes``, ``label_accuracy``, ``label_chance_auc``,
        ``label_chance_accuracy`` and ``label_targets``; a metric that cannot be computed (no class
        to score, no class decision, scores that are not finite) is ``None`` with its reason in the notes.

    Raises:
        ValueError: scores of the wrong shape, labels out of range, or no targets.
    """
    from sklearn.metrics import roc_auc_score  # imported here: cells without a label attack never need it

    scores, truth = _as_numpy(scores).astype(np.float64), _as_numpy(truth).astype(np.int64).reshape(-1)
    n = len(truth)
    if n == 0:
        raise ValueError("label scores: no targets to score")
    if scores.shape != (n, num_classes):
        raise ValueError(f"label scores: expected shape ({n}, {num_classes}), got {scores.shape}")
    if truth.min() < 0 or truth.max() >= num_classes:
        raise ValueError(f"label scores: true labels outside [0, {num_classes})")
    finite = bool(np.isfinite(scores).all())  # else a diverged attack (bench.run.divergence): nothing to score
    classes = [c for c in range(num_classes) if 0 < (truth == c).sum() < n]
    aucs = [roc_auc_score(truth == c, scores[:, c]) for c in classes] if finite else []
    metrics: dict[str, float | None] = {
        LABEL_AUC: float(np.mean(aucs)) if aucs else None,
        "label_auc_classes": float(len(classes)),
        LABEL_ACCURACY: float((scores.argmax(1) == truth).mean()) if top1 and finite else None,
        "label_chance_auc": CHANCE_AUC,
        "label_chance_accuracy": float(np.bincount(truth, minlength=num_classes).max() / n),
        "label_targets": float(n),
    }
    notes = {
        "label_chance_accuracy": "share of the targets' most common class (always guessing it)",
        "label_auc_classes": "classes present among the targets (and not alone), whose one-vs-rest AUCs are averaged",
    }
    if not classes:
        notes[LABEL_AUC] = "every target has the same label: no one-vs-rest AUC is defined"
    if not top1:
        notes[LABEL_ACCURACY] = "the attack's per-class scores make no class decision (norm scoring): no top-1"
    if not finite:
        notes[LABEL_AUC] = notes[LABEL_ACCURACY] = "some label scores are not finite (the attack diverged)"
    return metrics, notes
