"""Norm scoring: the size of the gradient the client's tail returns tells its label (Li et al.)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import torch
from torch import Tensor

from attacks.base import ATTACKS, AttackOutput, PassiveAttack
from attacks.labelled_aux import aux_tail_gradients, target_tail_gradients
from attacks.view import Capability
from bench.metrics.labels import LABEL_AUC


def class_signs(norms: Tensor, labels: Tensor, num_classes: int) -> Tensor:
    """Per class, +1 where that class's samples rank above the others by ``norms`` (mean rank of the
    class against the mean rank of the rest, i.e. its one-vs-rest AUC over 0.5), else −1; +1 for a
    class absent from ``labels`` or one that ties (Li et al.'s rule: the larger norm is the label)."""
    ranks = norms.argsort().argsort().float()
    signs = torch.ones(num_classes, device=norms.device)
    for c in range(num_classes):
        mine = labels == c
        if mine.any() and (~mine).any() and ranks[mine].mean() < ranks[~mine].mean():
            signs[c] = -1.0
    return signs


@ATTACKS.register("label-norm")
class NormScoring(PassiveAttack):
    """Scores each target's label by the L2 norm of the gradient the client's tail returns for it.

    Li et al. score the positive class of a binary task by the norm itself: the rarer positives get
    the larger gradients, and that prior fixes the sign. With C classes one sign cannot serve them
    all: a score shared by every class has one-vs-rest AUCs whose mean, weighted by ``n_c (n − n_c)``,
    is exactly 0.5 (each pair of differently labelled samples counts once, for one of its two
    classes), so on balanced targets the plain norm measures nothing by construction. Here class
    ``c``'s score is ``s_c · ‖g‖``: the norm, signed by whether class ``c``'s samples get larger or
    smaller norms than the rest among the server's own labelled aux samples (their tail gradients,
    :func:`class_signs`). Two classes with the larger-norm class signed +1 is Li et al.'s norm scoring
    exactly. The scores rank samples within each class but decide no class across them: the row
    reports one-vs-rest AUCs (``label_auc_mean``), no 10-way accuracy (``label_top1`` false).

    Tail gradients are each sample's own (summed loss, evaluation mode, the trained victim:
    :attr:`~attacks.view.Observation.tail_grads`), so the batch-mean scaling of a training step
    changes no ranking.

    Deviations: Li et al. read the gradients of a training step's batch as it happens (the batch
    size scales them all alike); here the trained victim's per-sample gradients. Their sign comes
    from a prior on the class balance; here from labelled aux samples, the same data the direction
    attack's references come from.

    Paper: Li et al., "Label Leakage and Protection in Two-party Split Learning", ICLR 2022
    (arXiv:2102.08504), §3.1 norm-based scoring.
    Threat model: honest-but-curious server in U-shaped SL, passive: it reads the gradients the
    client's tail returns (``tail_gradients``) for the targets, and for its own labelled auxiliary
    samples sent through the trained client path (``aux_data``, ``aux_queries``) as if the client
    held their labels. Refused in vanilla SL, where the server holds the labels.

    Args:
        view: what the server holds.
        profile: the profile (norm scoring has nothing to size).
        seed: the attacker's seed (nothing is drawn).
        budget: accepted as every attack's; norm scoring has no iterations to scale.
    """

    requires = frozenset({Capability.TAIL_GRADIENTS, Capability.AUX_DATA, Capability.AUX_QUERIES})
    kinds = ("image", "tabular")
    headline_metric = LABEL_AUC
    configs: ClassVar[Mapping[str, object]] = {}  # a closed-form score: nothing to size or tune

    def run(self) -> AttackOutput:
        targets = target_tail_gradients(self.view, "label-norm").norm(dim=1)
        aux_grads, aux_labels = aux_tail_gradients(self.view, "label-norm")
        signs = class_signs(aux_grads.norm(dim=1).cpu(), aux_labels.cpu(), self.view.num_classes)
        scores = targets.cpu()[:, None] * signs[None, :]
        return AttackOutput(
            label_scores=scores, label_top1=False,
            scores={"label_norm_negative_classes": float((signs < 0).sum())},
            notes={"label_norm_negative_classes": "classes whose aux samples get smaller tail-gradient norms than "
                                                  "the rest: scored by the negated norm"},
        )
