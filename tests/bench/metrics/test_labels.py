import math

import numpy as np
import pytest
import torch

from bench.metrics.labels import label_metrics


def pairwise_auc(score: np.ndarray, positive: np.ndarray) -> float:
    """The slow reference: the share of (positive, negative) pairs the score orders right, ties half."""
    pos, neg = score[positive], score[~positive]
    return float(np.mean([(p > q) + 0.5 * (p == q) for p in pos for q in neg]))


def _labels(n=200, classes=4, seed=0):
    return np.random.default_rng(seed).integers(0, classes, size=n)


def test_auc_mean_matches_the_pairwise_reference_and_accuracy_the_argmax():
    rng = np.random.default_rng(1)
    truth = _labels(60, 4, seed=1)
    scores = rng.normal(size=(60, 4)) + 1.5 * np.eye(4)[truth]
    scores[:5] = np.round(scores[:5])  # some ties
    metrics, _ = label_metrics(scores, truth, num_classes=4)
    expected = np.mean([pairwise_auc(scores[:, c], truth == c) for c in range(4)])
    assert metrics["label_auc_mean"] == pytest.approx(expected)
    assert metrics["label_accuracy"] == pytest.approx(np.mean(scores.argmax(1) == truth))
    assert metrics["label_auc_classes"] == 4 and metrics["label_targets"] == 60


def test_scores_that_name_every_label_reach_one():
    truth = torch.tensor(_labels())
    metrics, _ = label_metrics(torch.nn.functional.one_hot(truth, 4).float(), truth, num_classes=4)
    assert metrics["label_auc_mean"] == 1.0 and metrics["label_accuracy"] == 1.0


def test_a_constant_score_sits_at_chance_auc_and_scores_the_argmax_class_share():
    """The mean-label guess: every row the class frequencies (no sample read)."""
    truth = _labels(300, 5, seed=2)
    prior = np.bincount(truth, minlength=5) / len(truth)
    metrics, _ = label_metrics(np.tile(prior, (len(truth), 1)), truth, num_classes=5)
    assert metrics["label_auc_mean"] == 0.5
    assert metrics["label_accuracy"] == pytest.approx(prior.max()) == metrics["label_chance_accuracy"]


def test_chance_levels_are_recorded_beside_the_metrics():
    truth = np.array([0, 0, 0, 1, 2, 2])
    metrics, notes = label_metrics(np.zeros((6, 3)), truth, num_classes=3)
    assert metrics["label_chance_auc"] == 0.5
    assert metrics["label_chance_accuracy"] == pytest.approx(0.5)  # class 0's share
    assert "most common class" in notes["label_chance_accuracy"]


def test_label_independent_scores_stay_within_noise_of_half():
    """Null SE of one class's AUC with n1 positives and n0 negatives: sqrt((n0 + n1 + 1) / (12 n0 n1));
    the mean of 10 nearly independent ones: that over sqrt(10). Allowed: 4 of those."""
    rng = np.random.default_rng(3)
    n, classes = 1000, 10
    truth = rng.integers(0, classes, size=n)
    metrics, _ = label_metrics(rng.normal(size=(n, classes)), truth, num_classes=classes)
    n1 = n / classes
    se = math.sqrt((n + 1) / (12 * n1 * (n - n1))) / math.sqrt(classes)
    assert abs(metrics["label_auc_mean"] - 0.5) < 4 * se
    assert abs(metrics["label_accuracy"] - 1 / classes) < 4 * math.sqrt(0.1 * 0.9 / n)


def test_absent_classes_are_skipped_and_a_single_class_has_no_auc():
    truth = np.array([0, 0, 1, 1, 1])
    scores = np.array([[1, 0, 5], [1, 0, 5], [0, 1, 5], [0, 1, 5], [0, 1, 5]], dtype=float)
    metrics, _ = label_metrics(scores, truth, num_classes=3)
    assert metrics["label_auc_classes"] == 2 and metrics["label_auc_mean"] == 1.0
    assert metrics["label_accuracy"] == 0.0  # class 2 (absent) scores highest everywhere
    alone, notes = label_metrics(scores, np.ones(5, dtype=int), num_classes=3)
    assert alone["label_auc_mean"] is None and "same label" in notes["label_auc_mean"]


def test_scores_without_a_class_decision_report_no_accuracy():
    truth = _labels(40, 2)
    metrics, notes = label_metrics(np.random.default_rng(0).normal(size=(40, 2)), truth, num_classes=2, top1=False)
    assert metrics["label_accuracy"] is None and "no top-1" in notes["label_accuracy"]
    assert metrics["label_auc_mean"] is not None


def test_scores_that_are_not_finite_leave_the_metrics_empty_with_the_reason():
    metrics, notes = label_metrics(np.array([[0.0, np.nan], [1.0, 0.0]]), np.array([0, 1]), num_classes=2)
    assert metrics["label_auc_mean"] is None and metrics["label_accuracy"] is None
    assert "not finite" in notes["label_auc_mean"] and metrics["label_chance_auc"] == 0.5


@pytest.mark.parametrize("scores,truth,needle", [
    (np.zeros((4, 3)), np.array([0, 1, 2]), "expected shape (3, 3)"),
    (np.zeros((2, 2)), np.array([0, 2]), "outside [0, 2)"),
    (np.zeros((0, 2)), np.array([], dtype=int), "no targets"),
])
def test_bad_scores_fail_with_one_line(scores, truth, needle):
    with pytest.raises(ValueError) as err:
        label_metrics(scores, truth, num_classes=scores.shape[1])
    assert needle in str(err.value) and "\n" not in str(err.value)
