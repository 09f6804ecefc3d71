"""What an SDAR attacker can check without ground truth: did its simulator land on the payloads?

SDAR decodes the client's payloads with a decoder trained only on its simulator's cut maps, so the
reconstructions are only as good as the overlap of the two distributions. The payload discriminator
``e_dis`` judges that overlap while it trains, but its loss depends on how strong it is and does not
separate a working run from a collapsed one (CIFAR-10 JPEG seed 2, results/README.md: e_dis window
loss 0.64 and SSIM 0.09, against 0.32 and SSIM 0.75 on raw MNIST). These checks measure the overlap
with a fixed estimator (MK-MMD, :mod:`attacks.mmd`) after training, on what the server holds: the
target payloads' cut maps, the aux inputs and the attack's own networks.
"""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from attacks.mmd import mk_mmd

SAMPLES = 512  # per check; each side of a comparison gets half
MIN_SAMPLES = 4  # two a side: the MK-MMD estimator's least


@torch.no_grad()
def simulator_gap(
    *, simulate: Callable[[Tensor], Tensor], target_maps: Tensor, reconstructions: Tensor, aux_inputs: Tensor,
    samples: int = SAMPLES,
) -> dict[str, float]:
    """MK-MMD between what the attacker decodes and what it trained on, each beside its sampling floor.

    Args:
        simulate: aux inputs → the simulator's cut maps (evaluation mode).
        target_maps: the targets' cut maps, ``(N, ...)``.
        reconstructions: the decoded targets, ``(N, ...)``, in the aux inputs' shape.
        aux_inputs: the attacker's auxiliary inputs.
        samples: how many of each are used (the first ones: no randomness), at least 4.

    Returns:
        ``sdar_payload_mmd``: targets' cut maps against the simulator's maps of aux inputs;
        ``sdar_payload_mmd_floor``: the targets' maps, one half against the other (same
        distribution: the estimator's noise); ``sdar_image_mmd`` and ``sdar_image_mmd_floor``: the
        same for the reconstructions against the aux inputs, and the aux inputs' two halves.

    Raises:
        ValueError: when fewer than 4 targets or aux inputs are available.
    """
    n = min(samples, len(target_maps), len(aux_inputs), len(reconstructions))
    if n < MIN_SAMPLES:
        raise ValueError(f"sdar diagnostics need at least {MIN_SAMPLES} targets and aux inputs, got {n}")
    h = n // 2
    sim_maps = simulate(aux_inputs[:h])
    return {
        "sdar_payload_mmd": float(mk_mmd(target_maps[:h], sim_maps)),
        "sdar_payload_mmd_floor": float(mk_mmd(target_maps[:h], target_maps[h:2 * h])),
        "sdar_image_mmd": float(mk_mmd(reconstructions[:h], aux_inputs[:h])),
        "sdar_image_mmd_floor": float(mk_mmd(aux_inputs[:h], aux_inputs[h:2 * h])),
    }
