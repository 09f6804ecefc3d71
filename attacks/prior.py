"""The floor: an attacker who never reads the payload."""
from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import torch

from attacks.base import ATTACKS, AttackOutput, PassiveAttack, Scoring
from attacks.view import Capability


@ATTACKS.register("prior")
class MeanImagePrior(PassiveAttack):
    """Reconstructs every target as the mean of the attacker's auxiliary images, never reading a
    payload: the best data-independent guess under MSE, and the floor that leakage is read above.
    An attack that scores no better than this has measured no leakage, whatever its number.

    Also scored (its ``_black`` and ``_grey`` metrics): an all-black and a constant-0.5 image in
    place of every reconstruction, the trivial baselines of MNIST-like data on black, where
    foreground-masked metrics reward dark images.

    Paper: the floor of the suite's privacy claims (LightSplit, arXiv:2605.13265, reads leakage
    against Raw only); the mean-image baseline of model-inversion evaluations.
    Threat model: a server with same-distribution auxiliary images (``aux_data``) and nothing else;
    no payload is read.
    """

    requires = frozenset({Capability.AUX_DATA})
    kinds = ("image",)
    headline_metric = "ssim"
    configs: ClassVar[Mapping[str, object]] = {}  # the mean aux image: nothing to size or tune, so no profile sets anything
    scorings = (Scoring.AS_RETURNED, Scoring.BLACK, Scoring.GREY)

    def run(self) -> AttackOutput:
        aux = self.view.aux.inputs
        n = len(self.view.targets)
        mean = aux.float().mean(0, keepdim=True)
        return AttackOutput(reconstructions=mean.expand(n, *mean.shape[1:]).clone(), target_index=torch.arange(n))
