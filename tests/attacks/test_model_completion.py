import dataclasses

import pytest
import torch

from attacks import ATTACKS, Capability, ThreatModel
from attacks.labelled_aux import balanced_pick, per_class_pick
from attacks.model_completion import AUX_LABELS, CONFIGS, ModelCompletion, ModelCompletionConfig
from bench.profiles import get_profile
from bench.run.attack_cell import run_attack_cell
from bench.run.cell import Cell
from tests.attacks.label_fixtures import (
    label_view,
    labels,
    linear_code,
    mean_label_scores,
    null_accuracy_tolerance,
    scored,
    unrelated,
)

N, CLASSES = 1000, 10


def payload_view(coded=True):
    y, aux_y = labels(N, CLASSES, seed=0), labels(300, CLASSES, seed=1)
    if coded:
        targets, aux = linear_code(y, CLASSES, noise=0.3, seed=2), linear_code(aux_y, CLASSES, noise=0.3, seed=3)
    else:
        targets, aux = unrelated(N, seed=2), unrelated(300, seed=3)
    return label_view(classes=CLASSES, targets=targets, aux=aux, aux_labels=aux_y, as_payloads=True), y


def meets_quality(metrics: dict) -> bool:
    return metrics["label_accuracy"] >= 0.9 and metrics["label_auc_mean"] >= 0.99


def test_registered_passive_with_its_facts_and_the_aux_labels_sweep():
    cls = ATTACKS.get("model-completion")
    assert cls is ModelCompletion and cls.threat_model is ThreatModel.PASSIVE
    assert cls.requires == {Capability.AUX_DATA, Capability.AUX_QUERIES} and cls.headline_metric == "label_accuracy"
    assert AUX_LABELS in cls.knobs and AUX_LABELS.default == 40 and AUX_LABELS.default_values() == (10, 40, 100)
    assert CONFIGS["paper"].steps == 5120 and CONFIGS["paper"].batch_size == 16 and CONFIGS["paper"].lr == 2e-3


def test_payloads_that_encode_the_label_linearly_complete_to_a_classifier():
    view, y = payload_view()
    out = ModelCompletion(view=view, profile="smoke", aux_labels=40, config=ModelCompletionConfig(steps=150)).run()
    metrics = scored(out, y, CLASSES)
    assert meets_quality(metrics), metrics
    assert out.scores["mc_aux_labels"] == 40
    torch.testing.assert_close(out.label_scores.sum(1), torch.ones(N))


def test_label_independent_payloads_stay_within_noise_of_chance():
    view, y = payload_view(coded=False)
    metrics = scored(ModelCompletion(view=view, profile="smoke", config=ModelCompletionConfig(steps=150)).run(), y, CLASSES)
    assert abs(metrics["label_accuracy"] - 1 / CLASSES) < null_accuracy_tolerance(N, CLASSES)


def test_a_mean_label_mutant_fails_the_quality_bar():
    view, y = payload_view()

    class MeanLabel(ModelCompletion):
        def run(self):
            return dataclasses.replace(super().run(), label_scores=mean_label_scores(view.aux.labels, N, CLASSES))

    assert not meets_quality(scored(MeanLabel(view=view, profile="smoke").run(), y, CLASSES))


def test_the_budget_scales_the_steps_and_the_knob_bounds_the_labels():
    view, _ = payload_view()
    assert ModelCompletion(view=view, profile="cpu", budget=0.5).config.steps == CONFIGS["cpu"].steps // 2
    with pytest.raises(ValueError, match="aux_labels must be >= 2"):
        ModelCompletion(view=view, profile="smoke", aux_labels=1)


def test_labelled_samples_are_spread_over_the_classes():
    y = torch.tensor([0] * 50 + [1] * 5 + [2] * 45)
    picked = y[balanced_pick(y, 12, torch.Generator().manual_seed(0))]
    assert torch.bincount(picked, minlength=3).tolist() == [4, 4, 4]
    picked = y[balanced_pick(y, 30, torch.Generator().manual_seed(0))]
    counts = torch.bincount(picked, minlength=3).tolist()  # the small class gives all it has, the others share the rest
    assert counts[1] == 5 and sorted([counts[0], counts[2]]) == [12, 13]
    assert torch.bincount(y[per_class_pick(y, 7, torch.Generator().manual_seed(1))]).tolist() == [7, 5, 7]


def test_runs_end_to_end_on_digits(digits, tmp_path):
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=0,
                attack="model-completion", attack_knobs={"aux_labels": 10})
    metrics, _ = run_attack_cell(cell, data=digits, profile=get_profile("smoke"), cache_dir=tmp_path, artifacts_dir=None)
    assert 0.0 <= metrics["label_accuracy"] <= 1.0 and metrics["mc_aux_labels"] == 10
    assert metrics["label_chance_auc"] == 0.5 and metrics["label_chance_accuracy"] >= 0.1
