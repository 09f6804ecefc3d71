"""Direction scoring: the gradient the client's tail returns points the way of its label (Li et al.)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import torch
from torch import Tensor
from torch.nn import functional as F

from attacks.base import ATTACKS, AttackOutput, PassiveAttack
from attacks.labelled_aux import aux_tail_gradients, per_class_pick, target_tail_gradients
from attacks.view import AttackerView, Capability
from bench.attack_knobs import BUDGET
from bench.knobs import Knob
from bench.metrics.labels import LABEL_AUC

REFERENCES = Knob("references", int, default=5, minimum=1, maximum=1000,
                  help="label-direction: labelled aux samples per class whose tail gradients are the references")
NO_REFERENCE = -2.0  # a class without references: below every cosine, so never the decision


def direction_scores(grads: Tensor, references: Tensor, reference_labels: Tensor, num_classes: int) -> Tensor:
    """``(n, num_classes)``: each row's mean cosine similarity to the references of each class
    (:data:`NO_REFERENCE` for a class that has none)."""
    cosines = F.normalize(grads, dim=1) @ F.normalize(references, dim=1).T
    scores = torch.full((len(grads), num_classes), NO_REFERENCE, dtype=cosines.dtype, device=cosines.device)
    for c in reference_labels.unique().tolist():
        scores[:, c] = cosines[:, reference_labels == c].mean(1)
    return scores


@ATTACKS.register("label-direction")
class DirectionScoring(PassiveAttack):
    """Scores each target's label by the cosine similarity of the gradient the client's tail returns
    for it to the tail gradients of samples whose labels the server knows.

    Li et al. (binary) compare each gradient with one known positive example's: a positive cosine
    says positive. With C classes, each class has references: the tail gradients of ``references``
    labelled aux samples of that class (a seeded, per-class choice), and class ``c``'s score is the
    mean cosine to its references. Through a linear tail ``W`` the gradient is
    ``Wᵀ(softmax − onehot(y))``, dominated by ``−W_y`` until the tail is confident, so same-label
    gradients point alike. The scores give one-vs-rest AUCs (``label_auc_mean``) and a class decision,
    the highest mean cosine (``label_accuracy``).

    Tail gradients are each sample's own (summed loss, evaluation mode, the trained victim:
    :attr:`~attacks.view.Observation.tail_grads`); cosines ignore the batch-mean scaling.

    Deviations: Li et al. read one training batch's gradients with a known positive in the same
    batch; here the trained victim's, with references from the server's labelled aux data sent
    through the trained client path, as if the client held their labels (standing for the few
    members whose labels the server knows). Several references per class (mean cosine) where they
    use one: ``references`` 1 is their scoring.

    Paper: Li et al., "Label Leakage and Protection in Two-party Split Learning", ICLR 2022
    (arXiv:2102.08504), §3.2 direction-based scoring.
    Threat model: honest-but-curious server in U-shaped SL, passive: it reads the gradients the
    client's tail returns (``tail_gradients``) for the targets and for a few of its own labelled
    auxiliary samples sent through the trained client path (``aux_data``, ``aux_queries``). Refused
    in vanilla SL, where the server holds the labels.

    Args:
        view: what the server holds.
        profile: the profile (direction scoring has nothing to size).
        seed: the attacker's seed (which aux samples are the references).
        budget: accepted as every attack's; direction scoring has no iterations to scale.
        references: labelled aux samples per class used as references (fewer where a class has fewer).
    """

    requires = frozenset({Capability.TAIL_GRADIENTS, Capability.AUX_DATA, Capability.AUX_QUERIES})
    kinds = ("image", "tabular")
    headline_metric = LABEL_AUC
    configs: ClassVar[Mapping[str, object]] = {}  # a closed-form score: nothing to size or tune
    knobs = (BUDGET, REFERENCES)

    def __init__(self, *, view: AttackerView, profile: str, seed: int = 0, budget: float = 1.0,
                 references: int = REFERENCES.default) -> None:
        super().__init__(view=view, profile=profile, seed=seed, budget=budget)
        self.references = REFERENCES.check(references)

    def run(self) -> AttackOutput:
        targets = target_tail_gradients(self.view, "label-direction")
        aux_grads, aux_labels = aux_tail_gradients(self.view, "label-direction")
        chosen = per_class_pick(aux_labels, self.references, torch.Generator().manual_seed(self.seed))
        scores = direction_scores(targets, aux_grads[chosen].to(targets.device), aux_labels[chosen].to(targets.device),
                                  self.view.num_classes)
        return AttackOutput(
            label_scores=scores.cpu(),
            scores={"label_direction_references": float(len(chosen))},
            notes={"label_direction_references": "labelled aux samples whose tail gradients are the references"},
        )
