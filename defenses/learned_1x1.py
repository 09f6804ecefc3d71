"""Learned 1×1: a trainable channel bottleneck (BottleNet-style) at the cut."""
from __future__ import annotations

import math

from torch import Tensor, nn

from defenses.base import DEFENSES, Defense, DefenseConfigError, require_cr
from defenses.knobs import CR


@DEFENSES.register("learned-1x1")
class Learned1x1(Defense):
    """Client 1×1 conv C→c, server 1×1 conv c→C, trained end to end with the task.

    The CR is realised along channels: ``c = round(C / CR)`` (at least 1), so the realised CR is
    ``C / c`` and is recorded. A vector cut ``(d,)`` is a 1×1 map with ``d`` channels, so there the
    two convolutions are Linear layers d→c→d.

    Paper: LightSplit (arXiv:2605.13265), App. B-B1 "Learned 1×1" (after BottleNet, Shao & Zhang).
    Threat model: the server sees the ``c×H×W`` code and owns the decoder conv.

    Args:
        cut_shape: ``(C, H, W)`` or ``(d,)``.
        cr: nominal compression ratio; ``d / cr`` must be an integer ≥ 1.
        seed: unused (the layers are initialised from the cell's global seed).
    """

    knobs = (CR,)

    def __init__(self, *, cut_shape: tuple[int, ...], cr: float | None = None, seed: int = 0) -> None:
        super().__init__(cut_shape=cut_shape, seed=seed)
        require_cr(cr, math.prod(cut_shape), "learned-1x1")
        channels = cut_shape[0]
        self.code_channels = max(1, round(channels / cr))
        if self.code_channels > channels:
            raise DefenseConfigError(f"learned-1x1: CR {cr:g} < 1 is not a compression")
        if len(cut_shape) == 3:
            self.client_side.conv = nn.Conv2d(channels, self.code_channels, kernel_size=1)
            self.server_side.conv = nn.Conv2d(self.code_channels, channels, kernel_size=1)
        elif len(cut_shape) == 1:
            self.client_side.conv = nn.Linear(channels, self.code_channels)
            self.server_side.conv = nn.Linear(self.code_channels, channels)
        else:
            raise DefenseConfigError(f"learned-1x1 needs a C×H×W or vector cut, got {cut_shape}")

    def encode(self, z: Tensor) -> Tensor:
        return self.client_side.conv(z)

    def decode(self, payload: Tensor) -> Tensor:
        return self.server_side.conv(payload)
