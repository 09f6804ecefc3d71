"""Raw: the cut activation crosses unmodified."""
from __future__ import annotations

from torch import Tensor

from defenses.base import DEFENSES, Defense


@DEFENSES.register("raw")
class RawDefense(Defense):
    """No defense: the smashed data is sent as is.

    Paper: LightSplit (arXiv:2605.13265), App. B-B1 "Raw" — the upper bound on what the cut can leak.
    Threat model: the server sees the full ``d``-dimensional activation.
    """

    def encode(self, z: Tensor) -> Tensor:
        return z.flatten(1)

    def decode(self, payload: Tensor) -> Tensor:
        return payload.view(payload.shape[0], *self.cut_shape)
