import dataclasses

import pytest
import torch

from attacks import ATTACKS, ThreatModel
from attacks.label_direction import NO_REFERENCE, REFERENCES, DirectionScoring, direction_scores
from bench.profiles import get_profile
from bench.run.attack_cell import run_attack_cell
from bench.run.cell import Cell
from tests.attacks.label_fixtures import (
    label_view,
    labels,
    linear_code,
    mean_label_scores,
    null_accuracy_tolerance,
    null_auc_tolerance,
    scored,
    unrelated,
)

N, CLASSES = 1000, 10


def linear_view(noise=0.3):
    y, aux_y = labels(N, CLASSES, seed=0), labels(300, CLASSES, seed=1)
    view = label_view(classes=CLASSES, targets=linear_code(y, CLASSES, noise=noise, seed=2),
                      aux=linear_code(aux_y, CLASSES, noise=noise, seed=3), aux_labels=aux_y)
    return view, y


def meets_quality(metrics: dict) -> bool:
    return metrics["label_auc_mean"] >= 0.99 and metrics["label_accuracy"] >= 0.95


def test_registered_passive_with_its_facts_and_knob():
    assert ATTACKS.get("label-direction") is DirectionScoring and DirectionScoring.threat_model is ThreatModel.PASSIVE
    assert DirectionScoring.headline_metric == "label_auc_mean" and REFERENCES in DirectionScoring.knobs
    with pytest.raises(ValueError, match="references must be >= 1"):
        DirectionScoring(view=linear_view()[0], profile="smoke", references=0)


@pytest.mark.parametrize("references", [1, 5])
def test_gradients_that_encode_the_label_linearly_reach_auc_099(references):
    view, y = linear_view()
    out = DirectionScoring(view=view, profile="smoke", references=references).run()
    metrics = scored(out, y, CLASSES)
    assert meets_quality(metrics), metrics
    assert out.scores["label_direction_references"] == references * CLASSES


def test_label_independent_gradients_stay_within_noise_of_chance():
    y, aux_y = labels(N, CLASSES, seed=4), labels(300, CLASSES, seed=5)
    view = label_view(classes=CLASSES, targets=unrelated(N, seed=6), aux=unrelated(300, seed=7), aux_labels=aux_y)
    metrics = scored(DirectionScoring(view=view, profile="smoke").run(), y, CLASSES)
    assert abs(metrics["label_auc_mean"] - 0.5) < null_auc_tolerance(N, CLASSES)
    assert abs(metrics["label_accuracy"] - 1 / CLASSES) < null_accuracy_tolerance(N, CLASSES)


def test_a_mean_label_mutant_fails_the_quality_bar():
    view, y = linear_view()

    class MeanLabel(DirectionScoring):
        def run(self):
            return dataclasses.replace(super().run(), label_scores=mean_label_scores(view.aux.labels, N, CLASSES))

    assert not meets_quality(scored(MeanLabel(view=view, profile="smoke").run(), y, CLASSES))


def test_class_scores_are_mean_cosines_to_that_classs_references():
    grads = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    refs = torch.tensor([[3.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    scores = direction_scores(grads, refs, torch.tensor([0, 0, 1]), 3)
    half = 2 ** -0.5
    torch.testing.assert_close(scores, torch.tensor([[(1 + half) / 2, 0.0, NO_REFERENCE], [half / 2, 1.0, NO_REFERENCE]]))


def test_runs_end_to_end_on_digits(digits, tmp_path):
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=0,
                attack="label-direction")
    metrics, _ = run_attack_cell(cell, data=digits, profile=get_profile("smoke"), cache_dir=tmp_path, artifacts_dir=None)
    assert 0.0 <= metrics["label_auc_mean"] <= 1.0 and 0.0 <= metrics["label_accuracy"] <= 1.0
    assert metrics["label_chance_auc"] == 0.5 and 0.1 <= metrics["label_chance_accuracy"] < 1.0
