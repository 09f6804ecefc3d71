import dataclasses

import pytest
import torch

from attacks import ATTACKS, ThreatModel
from attacks.label_norm import NormScoring, class_signs
from bench.metrics.labels import label_metrics
from bench.profiles import get_profile
from bench.run.attack_cell import run_attack_cell
from bench.run.cell import Cell
from tests.attacks.label_fixtures import (
    label_view,
    labels,
    mean_label_scores,
    null_auc_tolerance,
    scored,
    unrelated,
)

N = 1000


def norm_coded(y, *, larger_for_positive=True, seed=0):
    """Binary tail gradients whose norm is linear in the label: random directions of length 1 or 3."""
    length = 1.0 + 2.0 * (y if larger_for_positive else 1 - y).float()
    direction = torch.nn.functional.normalize(unrelated(len(y), seed=seed), dim=1)
    return direction * (length + 0.1 * torch.randn(len(y), generator=torch.Generator().manual_seed(seed + 1)))[:, None]


def binary_view(larger_for_positive=True):
    y, aux_y = labels(N, 2, seed=0), labels(200, 2, seed=1)
    view = label_view(classes=2, targets=norm_coded(y, larger_for_positive=larger_for_positive, seed=2),
                      aux=norm_coded(aux_y, larger_for_positive=larger_for_positive, seed=3), aux_labels=aux_y)
    return view, y


def meets_quality(metrics: dict) -> bool:
    return metrics["label_auc_mean"] >= 0.99


def test_registered_passive_with_its_facts():
    assert ATTACKS.get("label-norm") is NormScoring and NormScoring.threat_model is ThreatModel.PASSIVE
    assert NormScoring.headline_metric == "label_auc_mean" and set(NormScoring.kinds) == {"image", "tabular"}


@pytest.mark.parametrize("larger_for_positive", [True, False])
def test_a_norm_that_encodes_the_label_reaches_auc_099_whichever_class_is_larger(larger_for_positive):
    view, y = binary_view(larger_for_positive)
    out = NormScoring(view=view, profile="smoke").run()
    metrics = scored(out, y, 2)
    assert meets_quality(metrics), metrics
    assert metrics["label_accuracy"] is None  # the norm ranks, it decides no class
    assert out.label_scores.shape == (N, 2)


def test_label_independent_gradients_stay_within_noise_of_half():
    y, aux_y = labels(N, 10, seed=4), labels(500, 10, seed=5)
    view = label_view(classes=10, targets=unrelated(N, seed=6), aux=unrelated(500, seed=7), aux_labels=aux_y)
    metrics = scored(NormScoring(view=view, profile="smoke").run(), y, 10)
    assert abs(metrics["label_auc_mean"] - 0.5) < null_auc_tolerance(N, 10)


def test_a_mean_label_mutant_fails_the_quality_bar():
    view, y = binary_view()

    class MeanLabel(NormScoring):
        def run(self):
            return dataclasses.replace(super().run(), label_scores=mean_label_scores(view.aux.labels, N, 2))

    assert not meets_quality(scored(MeanLabel(view=view, profile="smoke").run(), y, 2))


def test_one_shared_sign_measures_nothing_on_balanced_classes():
    """Why each class gets its own sign: a score shared by all classes has one-vs-rest AUCs whose mean,
    weighted by n_c (n - n_c), is exactly 0.5 (on balanced targets: the plain mean)."""
    y = torch.arange(10).repeat(50)
    norm = torch.rand(len(y), generator=torch.Generator().manual_seed(0)) + 0.2 * y  # norms that do depend on y
    metrics, _ = label_metrics(norm[:, None].expand(-1, 10), y, num_classes=10)
    assert metrics["label_auc_mean"] == pytest.approx(0.5, abs=1e-12)


def test_class_signs_follow_which_classes_get_the_larger_norms():
    y = torch.tensor([0, 0, 1, 1, 2, 2])
    assert class_signs(torch.tensor([5.0, 6, 1, 2, 3, 4]), y, 4).tolist() == [1, -1, 1, 1]  # class 3 absent: +1
    assert class_signs(torch.tensor([1.0, 2, 5, 6, 3, 4]), y, 3).tolist() == [-1, 1, 1]


def test_runs_end_to_end_on_digits(digits, tmp_path):
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=0,
                attack="label-norm")
    metrics, notes = run_attack_cell(cell, data=digits, profile=get_profile("smoke"), cache_dir=tmp_path, artifacts_dir=None)
    assert 0.0 <= metrics["label_auc_mean"] <= 1.0 and metrics["label_auc_classes"] == 10
    assert metrics["label_accuracy"] is None and "no top-1" in notes["label_accuracy"]
    assert metrics["label_chance_auc"] == 0.5 and metrics["label_targets"] == get_profile("smoke").targets


def test_each_targets_score_follows_its_own_gradient():
    view, _ = binary_view()
    out = NormScoring(view=view, profile="smoke").run()
    shuffled = NormScoring(view=dataclasses.replace(view, targets=dataclasses.replace(
        view.targets, tail_grads=view.targets.tail_grads.flip(0))), profile="smoke").run()
    torch.testing.assert_close(shuffled.label_scores, out.label_scores.flip(0))
