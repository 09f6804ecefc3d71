"""A worked example of a user-submitted defense with a setting of its own: LightSplit-F's payload
plus Gaussian noise of a fixed standard deviation, the knob ``noise``.

Sweep the new knob against every built-in defense with::

    bench compare --plugin examples/noisy_projection.py --defense noisy-projection --knob noise=0.05,0.2

Without ``--knob noise=...`` the grid uses the knob's default (0.1), which then stays out of the
cells' ids. Nothing in the suite is edited: the knob is declared here, next to the code that reads it.
"""
from __future__ import annotations

import torch
from torch import Tensor

from bench.knobs import Knob
from defenses.base import DEFENSES
from defenses.knobs import CR
from defenses.lightsplit import LightSplitF

NOISE = Knob("noise", float, default=0.1, minimum=0.0, maximum=10.0,
             help="standard deviation of the Gaussian noise added to every payload value")


@DEFENSES.register("noisy-projection")
class NoisyProjection(LightSplitF):
    """``Rᵀz + ε``, ``ε ~ N(0, noise²)`` per value, in training and at evaluation; the server lifts
    back with the fixed ``R``.

    Paper: none — an illustrative defense between LightSplit-F (no noise) and DP (noise scaled to a
    clipped norm): fixed-scale noise, no clipping, no formal guarantee.
    Threat model: the server knows ``R`` and the noise scale, and sees the noised ``k``-vector.

    Args:
        cut_shape: per-sample shape of the cut activation.
        cr: compression ratio ``d / k``.
        noise: standard deviation of the added noise.
        seed: seed of ``R``.
    """

    knobs = (CR, NOISE)

    def __init__(self, *, cut_shape: tuple[int, ...], cr: float | None = None, noise: float = NOISE.default,
                 seed: int = 0) -> None:
        super().__init__(cut_shape=cut_shape, cr=cr, seed=seed)
        self.noise = NOISE.check(noise)

    def encode(self, z: Tensor) -> Tensor:
        payload = super().encode(z)
        return payload + self.noise * torch.randn_like(payload) if self.noise > 0 else payload
