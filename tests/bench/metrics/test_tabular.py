import math

import numpy as np
import pytest
import torch

from bench.metrics import median_r2, per_feature_r2, reid_accuracy


def _data(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(200, 5))


def test_perfect_reconstruction_has_r2_one():
    truth = _data()
    np.testing.assert_allclose(per_feature_r2(truth.copy(), truth), 1.0)
    assert median_r2(truth.copy(), truth) == pytest.approx(1.0)


def test_predicting_the_mean_has_r2_zero_and_worse_is_negative():
    truth = _data()
    mean = np.broadcast_to(truth.mean(axis=0), truth.shape)
    np.testing.assert_allclose(per_feature_r2(mean, truth), 0.0, atol=1e-12)
    assert (per_feature_r2(-truth, truth) < 0).all()
    # Zero-mean y predicted by -y: residuals are -2y, so SS_res = 4 SS_tot and R² = 1 - 4 = -3.
    centred = truth - truth.mean(axis=0)
    np.testing.assert_allclose(per_feature_r2(-centred, centred), -3.0)


def test_median_over_features_against_hand_computed_r2():
    rng = np.random.default_rng(1)
    truth = rng.normal(size=(100, 3))
    recon = truth + rng.normal(size=truth.shape) * np.array([0.1, 1.0, 3.0])
    expected = [1 - ((recon[:, j] - truth[:, j]) ** 2).sum() / ((truth[:, j] - truth[:, j].mean()) ** 2).sum() for j in range(3)]
    np.testing.assert_allclose(per_feature_r2(recon, truth), expected)
    assert median_r2(recon, truth) == pytest.approx(sorted(expected)[1])


def test_constant_truth_features_are_excluded():
    truth = _data()
    truth[:, 1] = 7.0
    recon = truth.copy()
    recon[:, 1] = 0.0  # would score 0 under sklearn's convention, dragging the median
    recon[:, [0, 2]] = 0.0  # R² < 0 on two features, R² = 1 on the other two
    scores = per_feature_r2(recon, truth)
    assert math.isnan(scores[1])
    assert median_r2(recon, truth) == pytest.approx(np.median(scores[[0, 2, 3, 4]]))
    assert math.isnan(median_r2(np.zeros((4, 2)), np.ones((4, 2))))


def test_accepts_torch_tensors_and_one_feature():
    truth = torch.arange(10.0)
    assert median_r2(truth.clone(), truth) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        per_feature_r2(np.zeros((3, 2)), np.zeros((3, 3)))


def test_reid_accuracy_and_chance():
    accuracy, chance = reid_accuracy([0, 1, 2, 2, 1, 0, 3, 3], [0, 1, 2, 1, 1, 2, 3, 0])
    assert accuracy == pytest.approx(5 / 8)
    assert chance == pytest.approx(1 / 4)
    assert reid_accuracy(torch.tensor([5, 5]), torch.tensor([5, 5])) == (1.0, 1.0)
    with pytest.raises(ValueError):
        reid_accuracy([1, 2], [1])
