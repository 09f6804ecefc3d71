"""Synthetic views for the label attacks' oracles: tail gradients or payloads that encode the label
linearly, or carry nothing of it; and the quality bars their tests hold them to."""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from attacks import AttackerView, Capability, Observation
from bench.metrics.labels import label_metrics
from defenses import build_defense

GRANTED = frozenset({Capability.TAIL_GRADIENTS, Capability.AUX_DATA, Capability.AUX_QUERIES})
WIDTH = 32  # features the tail receives (and the width of the synthetic payloads)


def labels(n: int, classes: int, seed: int) -> Tensor:
    return torch.randint(classes, (n,), generator=torch.Generator().manual_seed(seed))


def linear_code(y: Tensor, classes: int, *, noise: float, seed: int, width: int = WIDTH) -> Tensor:
    """``A onehot(y) + noise``: one fixed random direction per class (the same ``A`` for every seed)."""
    directions = torch.randn(width, classes, generator=torch.Generator().manual_seed(1234))
    return torch.nn.functional.one_hot(y, classes).float() @ directions.T + noise * torch.randn(
        len(y), width, generator=torch.Generator().manual_seed(seed))


def unrelated(n: int, *, seed: int, width: int = WIDTH) -> Tensor:
    """Rows that carry nothing of any label."""
    return torch.randn(n, width, generator=torch.Generator().manual_seed(seed))


def label_view(*, classes: int, targets: Tensor, aux: Tensor, aux_labels: Tensor, as_payloads: bool = False) -> AttackerView:
    """A view whose targets' and aux samples' tail gradients (or, ``as_payloads``, payloads on a raw
    cut with an identity backbone) are the given rows."""
    width = targets.shape[1]
    field = "payloads" if as_payloads else "tail_grads"
    return AttackerView(
        granted=GRANTED, kind="image", input_shape=(width,), num_classes=classes, cut_shape=(width,), defense_name="raw",
        targets=Observation(**{field: targets}), backbone=nn.Identity(),
        server_defense=build_defense("raw", cut_shape=(width,), seed=0),
        aux=Observation(**{field: aux}, inputs=torch.zeros(len(aux_labels), width), labels=aux_labels),
    )


def null_auc_tolerance(n: int, classes: int) -> float:
    """Four standard errors of the mean one-vs-rest AUC of label-independent scores on ``n`` balanced
    targets: each class's null SE is ``sqrt((n + 1) / (12 n1 n0))``, and the mean of ``classes`` nearly
    independent ones shrinks it by ``sqrt(classes)``."""
    n1 = n / classes
    return 4 * math.sqrt((n + 1) / (12 * n1 * (n - n1))) / math.sqrt(classes)


def null_accuracy_tolerance(n: int, classes: int) -> float:
    """Four binomial standard errors of a top-1 accuracy at chance ``1 / classes`` on ``n`` targets."""
    p = 1 / classes
    return 4 * math.sqrt(p * (1 - p) / n)


def scored(output, truth: Tensor, classes: int) -> dict:
    """The bench's label metrics of an attack's output."""
    return label_metrics(output.label_scores, truth, num_classes=classes, top1=output.label_top1)[0]


def mean_label_scores(aux_labels: Tensor, n: int, classes: int) -> Tensor:
    """The mutant's scores: every target gets the aux class frequencies (no sample is read)."""
    prior = torch.bincount(aux_labels, minlength=classes).float() / len(aux_labels)
    return prior.expand(n, classes).clone()
