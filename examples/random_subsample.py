"""A worked example of a user-submitted defense: send a fixed random subset of the cut's coordinates.

Run it against every built-in defense with::

    bench compare --plugin examples/random_subsample.py --defense random-subsample

The class only has to subclass :class:`defenses.base.Defense`, declare the knobs it reads (here the shared ``cr``), and
register itself; nothing in the suite is edited.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor

from defenses.base import DEFENSES, Defense, require_cr
from defenses.knobs import CR


@DEFENSES.register("random-subsample")
class RandomSubsample(Defense):
    """Keeps ``k = d / CR`` coordinates chosen once at random (public), drops the rest.

    Paper: none — an illustrative baseline between top-K (data-dependent positions) and LightSplit
    (a mixing projection): fixed positions, un-mixed values.
    Threat model: the server knows the kept positions and sees their values.

    Args:
        cut_shape: per-sample shape of the cut activation.
        cr: compression ratio ``d / k``.
        seed: seed of the kept positions.
    """

    knobs = (CR,)

    def __init__(self, *, cut_shape: tuple[int, ...], cr: float | None = None, seed: int = 0) -> None:
        super().__init__(cut_shape=cut_shape, seed=seed)
        d = math.prod(cut_shape)
        k = require_cr(cr, d, "random-subsample")
        kept = torch.randperm(d, generator=torch.Generator().manual_seed(seed))[:k].sort().values
        self.register_buffer("kept", kept)

    def encode(self, z: Tensor) -> Tensor:
        return z.flatten(1)[:, self.kept]

    def decode(self, payload: Tensor) -> Tensor:
        dense = payload.new_zeros(payload.shape[0], self.d)
        dense[:, self.kept] = payload
        return dense.view(-1, *self.cut_shape)

    def public_state(self) -> dict[str, Tensor]:
        return {"kept": self.kept}
