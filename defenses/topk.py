"""Top-K sparsification at the cut, matched to the payload of ``k`` floats."""
from __future__ import annotations

import math

from torch import Tensor

from defenses.base import DEFENSES, Defense, require_cr
from defenses.knobs import CR
from defenses.payload import SparsePayload, index_dtype


@DEFENSES.register("topk")
class TopKSparse(Defense):
    """Keeps the ``k_s = ⌊4k/6⌋`` largest-magnitude activations with their positions, zeroes the rest.

    ``k_s`` float32 values (4 bytes) plus ``k_s`` int16 positions (2 bytes) take ``6·k_s ≤ 4k``
    bytes, the wire size of ``k`` floats. Gradients flow only through the kept values; an attacker's
    own simulated passes use a straight-through estimator instead (:meth:`Defense.attacker_encode`).

    Paper: LightSplit (arXiv:2605.13265), App. B-B1 "top-k sparse"; after Zheng et al. (IJCAI'23).
    Threat model: the server sees the kept values at their own coordinates.

    Args:
        cut_shape: per-sample shape of the cut activation.
        cr: compression ratio ``d / k``.
        seed: unused (deterministic).
    """

    knobs = (CR,)
    straight_through = True  # the support gets no gradient: attackers simulate it straight-through

    def __init__(self, *, cut_shape: tuple[int, ...], cr: float | None = None, seed: int = 0) -> None:
        super().__init__(cut_shape=cut_shape, seed=seed)
        k = require_cr(cr, math.prod(cut_shape), "topk")
        self.kept = max(1, (4 * k) // 6)

    def encode(self, z: Tensor) -> SparsePayload:
        flat = z.flatten(1)
        indices = flat.abs().topk(self.kept, dim=1).indices
        values = flat.gather(1, indices)
        return SparsePayload(values, indices.to(index_dtype(self.d)), self.d)

    def decode(self, payload: SparsePayload | Tensor) -> Tensor:
        """The dense map; an attacker's straight-through payload is already dense."""
        dense = payload.to_dense() if isinstance(payload, SparsePayload) else payload
        return dense.view(-1, *self.cut_shape)
