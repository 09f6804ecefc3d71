"""Differential privacy at the cut: per-sample L2 clipping and Gaussian noise on the payload."""
from __future__ import annotations

import torch
from torch import Tensor

from defenses.base import PAYLOAD_TRANSFORMS, DefenseConfigError, PayloadTransform
from defenses.knobs import SIGMA
from defenses.payload import Payload, values_of, with_values


@PAYLOAD_TRANSFORMS.register("dp")
class GaussianPayloadNoise(PayloadTransform):
    """Clips each sample's payload to an L2 bound and adds N(0, (σ·clip)²) noise, in training and
    at evaluation, so the noise is part of every released representation.

    The clip is the median per-sample payload norm ("so half of the payloads are clipped"),
    measured once per configuration before training (:meth:`calibrate`, on the members' payloads
    through the initial client path) and then fixed, in training and at evaluation. Uncalibrated,
    the first batch it sees fixes it. The clip is data-dependent, as in the paper; formal accounting
    treats it as public, and so do the attackers, whose simulated paths clip and noise alike.

    Paper: LightSplit (arXiv:2605.13265), App. B-B7 and B-C7 (operating point σ = 0.02).
    Threat model: the server sees only clipped, noised payloads.

    Args:
        sigma: noise multiplier σ ≥ 0 (noise std is σ·clip).
    """

    knobs = (SIGMA,)

    def __init__(self, *, sigma: float | None = None) -> None:
        super().__init__()
        if sigma is None:
            raise DefenseConfigError("dp needs a noise multiplier (--sigma)")
        if sigma < 0:
            raise DefenseConfigError(f"dp: sigma must be >= 0, got {sigma:g}")
        self.sigma = float(sigma)
        self.register_buffer("clip_norm", torch.tensor(0.0))
        self.register_buffer("calibrated", torch.tensor(False))

    @torch.no_grad()
    def calibrate(self, payload: Payload) -> None:
        """Fix the clip at the median per-sample norm of ``payload``."""
        self.clip_norm.copy_(values_of(payload).flatten(1).norm(dim=1).median())
        self.calibrated.fill_(True)

    def current_clip(self, values: Tensor) -> Tensor:
        if not bool(self.calibrated):
            self.calibrate(values)
        return self.clip_norm

    def accounting(self, *, epochs: int) -> dict[str, float]:
        """(ε, δ) per release and over the run (:func:`bench.metrics.privacy.dp_metrics`)."""
        from bench.metrics.privacy import dp_metrics  # Opacus loads only for DP cells

        return dp_metrics(sigma=self.sigma, epochs=epochs)

    def forward(self, payload: Payload) -> Payload:
        values = values_of(payload)
        clip = self.current_clip(values)
        clipped = clip_rows(values, clip)
        noise = torch.randn_like(clipped) * (self.sigma * clip)
        return with_values(payload, clipped + noise)


def clip_rows(values: Tensor, clip: Tensor | float) -> Tensor:
    """Each row of ``values`` scaled to L2 norm at most ``clip``: the noise-free part of
    :class:`GaussianPayloadNoise` (the attack-free measures read it too)."""
    norms = values.flatten(1).norm(dim=1).clamp_min(1e-12)
    return values * (clip / norms).clamp(max=1.0).view(-1, *([1] * (values.dim() - 1)))
