"""A running per-element mean of the observed payloads' cut maps, and a simulator's standardised gap to it.

SDAR ties its simulator to the client only through a payload critic. A passive server also sees the
first moment of every cut-map element, and for a mismatch that mixes channels alike at every position
(a 1×1 map ``M``) matching it identifies the client's code: ``M μ_p = μ_p`` at every position ``p``
forces ``M = I`` wherever the per-position mean vectors ``μ_p`` span the channels
(``tests/attacks/test_payload_moments.py`` checks both cases).

Sparse maps: the gap is standardised per element, and on a sparse cut map an element that fires
seldom has a running spread near zero (the running window holds about 1,200 samples at batch 64), so
a simulator firing there once would dominate the gap. Each element's spread is therefore counted at
least ``FLOOR`` times the map's root-mean-square spread: about the spread of an element seen firing
once in the window on a map where one element in eight fires (top-K at CR 8). On CIFAR-10 (JPEG) top-K CR 8, 6 of
the 4,096 elements of the client's dense map never fire on 4,096 members and 721 fire on under 1 in
64; without the floor SDAR tied at weight 1 lost to its critic there (diverged on seeds 0 and 1;
benchmarks/RESULTS.md). ``floored`` keeps, per gap, the share of elements the floor bound (``floored_share``,
which SDAR and FORA report); at 0 the gap is what it was without the floor.
"""
from __future__ import annotations

import torch
from torch import Tensor

from bench.run.device import DeviceLog

DECAY = 0.9
"""Weight of the running moments at each observed batch (about the last ten batches count)."""
FLOOR = 0.1
"""An element's spread counts at least this fraction of the map's root-mean-square spread."""


class PayloadMomentTie:
    """Exponential moving averages of the observed cut maps' per-element first and second moments.

    Args:
        decay: weight of the running moments at each update, in ``[0, 1)`` (0: the last batch alone).
    """

    def __init__(self, *, decay: float = DECAY) -> None:
        if not 0 <= decay < 1:
            raise ValueError(f"moment tie: decay must lie in [0, 1), got {decay}")
        self.decay = decay
        self.moments: tuple[Tensor, Tensor] | None = None
        self._floored = DeviceLog()

    @property
    def floored(self) -> list[float]:
        """Per gap taken, the share of elements whose spread was floored."""
        return [share for (share,) in self._floored.rows()]

    def floored_share(self) -> float | None:
        """The mean of ``floored`` over every gap taken (``None`` before the first)."""
        floored = self.floored
        return sum(floored) / len(floored) if floored else None

    @torch.no_grad()
    def observe(self, maps: Tensor) -> None:
        """Fold one observed batch of cut maps ``(B, ...)`` into the running moments."""
        batch = (maps.mean(0), maps.pow(2).mean(0))
        if self.moments is None:
            self.moments = batch
        else:
            self.moments = tuple(self.decay * old + (1 - self.decay) * new for old, new in zip(self.moments, batch))

    def gap(self, maps: Tensor) -> Tensor:
        """``mean_k ((mean_batch maps_k − μ_k) / σ_k)²`` over elements ``k``, differentiable into ``maps``,
        with each ``σ_k`` at least ``FLOOR`` times the root-mean-square of the ``σ``; the share of
        elements floored is appended to ``floored``.

        Raises:
            RuntimeError: before any batch was observed.
        """
        if self.moments is None:
            raise RuntimeError("moment tie: no payload observed yet")
        mean, square = self.moments
        std = (square - mean.pow(2)).clamp_min(0).sqrt()
        floor = (FLOOR * std.pow(2).mean().sqrt()).clamp_min(1e-6)
        self._floored.append((std < floor).float().mean())
        return ((maps.mean(0) - mean) / std.clamp_min(floor)).pow(2).mean()
