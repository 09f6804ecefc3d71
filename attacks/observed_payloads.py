"""A ring buffer of the cut maps (and labels) a passive server has observed, for attacks that take
more iterations than there are observed steps.

SDAR's release takes one iteration per victim step, on a fresh batch each time. When a budget asks
for ``k`` iterations per observed step, repeating the step's batch ``k`` times lets the payload critic
memorise it (raw MNIST at ×16: critic loss 3e-6 and SSIM 0.17, results/issue12-convergence). Drawing
the extra iterations from the recent observations instead shows the critic a batch it has not just
seen, mixed across steps, as the release's many epochs over the client's data do.

The buffer keeps the last ``capacity`` samples. Their maps were read when they were observed, so
they lag the live client (and, where the server half shapes the map, the live server) by at most
``capacity / batch`` steps: about the drift the release's own epochs carry.
"""
from __future__ import annotations

import torch
from torch import Tensor


class ObservedPayloads:
    """The last ``capacity`` observed cut maps and their labels (``None`` in U-shaped SL).

    Args:
        capacity: samples kept (the oldest are overwritten first), at least 1.

    Raises:
        ValueError: for a capacity under 1, or a batch whose shape, device or labelling differs
            from the first one stored.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"observed payloads: capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.maps: Tensor | None = None
        self.labels: Tensor | None = None
        self.filled = 0  # samples stored, up to capacity
        self.next = 0  # where the next sample goes

    def __len__(self) -> int:
        return self.filled

    def add(self, maps: Tensor, labels: Tensor | None) -> None:
        """Store a batch (detached); once full, the oldest samples give way."""
        maps = maps.detach()
        if self.maps is None:
            self.maps = maps.new_empty((self.capacity, *maps.shape[1:]))
            self.labels = None if labels is None else labels.new_empty((self.capacity,))
        if maps.shape[1:] != self.maps.shape[1:] or (labels is None) != (self.labels is None):
            raise ValueError(f"observed payloads: a batch of shape {tuple(maps.shape)} with"
                             f"{'out' if labels is None else ''} labels does not fit the buffer's "
                             f"{tuple(self.maps.shape[1:])}")
        for start in range(0, len(maps), self.capacity):  # a batch larger than the buffer keeps its tail
            chunk = slice(start, start + self.capacity)
            n = len(maps[chunk])
            slots = (torch.arange(n, device=self.maps.device) + self.next) % self.capacity
            self.maps[slots] = maps[chunk]
            if self.labels is not None:
                self.labels[slots] = labels[chunk]
            self.next = (self.next + n) % self.capacity
            self.filled = min(self.capacity, self.filled + n)

    def draw(self, size: int, generator: torch.Generator) -> tuple[Tensor, Tensor | None]:
        """``size`` stored samples drawn uniformly without replacement (with replacement when fewer
        are stored), from ``generator``.

        Raises:
            ValueError: when nothing is stored yet.
        """
        if self.maps is None or self.filled == 0:
            raise ValueError("observed payloads: nothing observed yet")
        here = generator.device
        if size <= self.filled:
            idx = torch.randperm(self.filled, generator=generator, device=here)[:size]
        else:
            idx = torch.randint(self.filled, (size,), generator=generator, device=here)
        idx = idx.to(self.maps.device)
        return self.maps[idx], None if self.labels is None else self.labels[idx]
