"""A defense whose mechanism acts on the raw cut at CR 1 and on learned 1×1's code at CR > 1."""
from __future__ import annotations

import math

from torch import Tensor, nn

from defenses.base import Defense, DefenseConfigError, require_cr
from defenses.learned_1x1 import Learned1x1


class BottleneckedDefense(Defense):
    """Shared body of the defenses that do not compress by themselves (NoPeek, Shredder).

    At ``cr = 1`` the mechanism sees the raw cut activation, as published. At ``cr > 1`` it sees the
    code of a :class:`~defenses.learned_1x1.Learned1x1` bottleneck (client 1×1 conv C→c, server 1×1
    conv c→C, ``c = round(C / CR)``), held as a child defense, so the bytes match learned 1×1's at
    the same CR and its realised CR is the one recorded.

    Args:
        cut_shape: ``(C, H, W)`` or ``(d,)``.
        cr: compression ratio; 1 sends the raw activation.
        seed: passed to the bottleneck (unused there).
        name: the registered name, for error messages.
    """

    def __init__(self, *, cut_shape: tuple[int, ...], cr: float | None, seed: int, name: str) -> None:
        super().__init__(cut_shape=cut_shape, seed=seed)
        require_cr(cr, math.prod(cut_shape), name)
        if cr < 1:
            raise DefenseConfigError(f"{name}: CR {cr:g} < 1 is not a compression")
        self.bottleneck: Learned1x1 | None = None if cr == 1 else Learned1x1(cut_shape=cut_shape, cr=cr, seed=seed)

    @property
    def code_shape(self) -> tuple[int, ...]:
        """Per-sample shape of what the mechanism acts on and what crosses the wire."""
        if self.bottleneck is None:
            return self.cut_shape
        return (self.bottleneck.code_channels, *self.cut_shape[1:])

    def to_code(self, z: Tensor) -> Tensor:
        return z if self.bottleneck is None else self.bottleneck.encode(z)

    def from_code(self, code: Tensor) -> Tensor:
        return code if self.bottleneck is None else self.bottleneck.decode(code)

    def encode(self, z: Tensor) -> Tensor:
        """The code itself crosses (a mechanism that changes it, Shredder's noise, overrides this)."""
        return self.to_code(z)

    def decode(self, payload: Tensor) -> Tensor:
        return self.from_code(payload)

    def client_parameters(self) -> list[nn.Parameter]:
        own = super().client_parameters()
        return own if self.bottleneck is None else self.bottleneck.client_parameters() + own

    def server_parameters(self) -> list[nn.Parameter]:
        own = super().server_parameters()
        return own if self.bottleneck is None else self.bottleneck.server_parameters() + own
