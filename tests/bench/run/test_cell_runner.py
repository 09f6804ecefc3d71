"""The chance rate every cell records beside its victim's accuracy."""
import torch

from bench.run.cell_runner import chance_metrics


def test_chance_is_the_majority_class_share():
    labels = torch.tensor([0, 0, 0, 1, 2, 2, 5, 5, 5, 5])
    assert chance_metrics(labels) == {"chance_accuracy": 0.4, "test_samples": 10.0}
