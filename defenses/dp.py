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

    The clip is the median per-sample payload norm ("so half of the payloads are clipped"). In
    training it is the current batch's median; a running average of those medians (momentum 0.1,
    like BatchNorm's statistics) is kept and used at evaluation, where batches may be tiny. The
    clip is therefore data-dependent, as in the paper; formal accounting treats it as public.

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

    def current_clip(self, values: Tensor) -> Tensor:
        if not self.training and bool(self.calibrated):
            return self.clip_norm
        median = values.detach().flatten(1).norm(dim=1).median()
        if self.training:
            with torch.no_grad():
                if bool(self.calibrated):
                    self.clip_norm.mul_(0.9).add_(0.1 * median)
                else:
                    self.clip_norm.copy_(median)
                    self.calibrated.fill_(True)
        return median

    def accounting(self, *, epochs: int) -> dict[str, float]:
        """(ε, δ) per release and over the run (:func:`bench.metrics.privacy.dp_metrics`)."""
        from bench.metrics.privacy import dp_metrics  # Opacus loads only for DP cells

        return dp_metrics(sigma=self.sigma, epochs=epochs)

    def forward(self, payload: Payload) -> Payload:
        values = values_of(payload)
        clip = self.current_clip(values)
        norms = values.flatten(1).norm(dim=1).clamp_min(1e-12)
        scale = (clip / norms).clamp(max=1.0).view(-1, *([1] * (values.dim() - 1)))
        clipped = values * scale
        noise = torch.randn_like(clipped) * (self.sigma * clip)
        return with_values(payload, clipped + noise)
