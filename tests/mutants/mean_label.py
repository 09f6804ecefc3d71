"""Mutant: every label attack reads nothing and scores each target with the class frequencies of the
server's labelled aux samples (the mean-label guess); SDAR's label scores become the same.

Such scores sit at chance (one-vs-rest AUC 0.5, top-1 the most common aux class), so every quality
test of a label attack on a fixture that encodes the label must fail.
"""
from __future__ import annotations

import pytest

from tests.mutants.expect_failure import register

PARALLEL = False  # seconds of work: workers cost more to start than they save
TARGETS = (
    *(f"tests/attacks/test_label_norm.py::test_a_norm_that_encodes_the_label_reaches_auc_099_whichever_class_is_larger[{b}]"
      for b in ("True", "False")),
    *(f"tests/attacks/test_label_direction.py::test_gradients_that_encode_the_label_linearly_reach_auc_099[{k}]"
      for k in (1, 5)),
    "tests/attacks/test_model_completion.py::test_payloads_that_encode_the_label_linearly_complete_to_a_classifier",
)


def _mean_label(run):
    def mean_label_run(self):
        import dataclasses

        import torch

        output = run(self)
        if output.label_scores is None:
            return output
        labels = self.view.aux.labels
        prior = torch.bincount(labels, minlength=self.view.num_classes).float() / len(labels)
        return dataclasses.replace(output, label_scores=prior.expand_as(output.label_scores).clone())

    return mean_label_run


def pytest_configure(config: pytest.Config) -> None:
    from attacks import ATTACKS  # imported here: the runner reads TARGETS without torch

    for name in ATTACKS.names():
        cls = ATTACKS.get(name)
        if "run" in vars(cls):
            cls.run = _mean_label(cls.run)
    register(config, "mean-label")
