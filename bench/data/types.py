"""In-memory dataset containers shared by every loader.

Loaders return a :class:`RawDataset` (the dataset's own train/test files as tensors); the member /
non-member / test carving and the client partitions are done afterwards in :mod:`bench.data.splits`,
so that every dataset is split by the same code.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor


@dataclass(frozen=True)
class ArraySplit:
    """One split of a dataset held in memory.

    Attributes:
        x: images as float32 ``(N, C, H, W)`` in [0, 1], tabular features ``(N, F)`` float32, or
            int64 token blocks ``(N, T)``.
        y: int64 class labels ``(N,)``, or a token block's next-token targets ``(N, T)``.
        groups: optional int64 group ids ``(N,)`` (UCI HAR subject ids); ``None`` where the dataset has none.
    """

    x: Tensor
    y: Tensor
    groups: Tensor | None = None

    def __post_init__(self) -> None:
        if self.x.shape[0] != self.y.shape[0]:
            raise ValueError(f"x has {self.x.shape[0]} rows but y has {self.y.shape[0]}")
        if self.groups is not None and self.groups.shape[0] != self.y.shape[0]:
            raise ValueError("groups and y differ in length")

    def __len__(self) -> int:
        return int(self.y.shape[0])

    def to(self, device: torch.device | str) -> ArraySplit:
        """The split on ``device`` (itself where it is there already)."""
        groups = None if self.groups is None else self.groups.to(device)
        return ArraySplit(self.x.to(device), self.y.to(device), groups)

    def nbytes(self) -> int:
        tensors = (self.x, self.y) if self.groups is None else (self.x, self.y, self.groups)
        return sum(t.numel() * t.element_size() for t in tensors)

    def take(self, index: Tensor) -> ArraySplit:
        """Rows at ``index`` (a LongTensor), as a new split."""
        groups = None if self.groups is None else self.groups[index]
        return ArraySplit(self.x[index], self.y[index], groups)

    @staticmethod
    def concat(parts: list[ArraySplit]) -> ArraySplit:
        has_groups = all(p.groups is not None for p in parts)
        return ArraySplit(
            torch.cat([p.x for p in parts]),
            torch.cat([p.y for p in parts]),
            torch.cat([p.groups for p in parts]) if has_groups else None,
        )


@dataclass(frozen=True)
class RawDataset:
    """A dataset as found on disk.

    Attributes:
        name: registry name (``mnist``, ``har``, ...).
        num_classes: number of classes.
        kind: ``"image"`` or ``"tabular"``.
        test: the dataset's test split (always present).
        train: the dataset's training split, or ``None`` where only the test split is on disk
            (the offline MNIST copy); :mod:`bench.data.splits` then carves everything from ``test``.
        class_names: optional human-readable class names.
        black_background: images are strokes on a black background (MNIST-like), so
            reconstructions are also scored on the foreground only (App. B-C3/B-D).
        source: the copy that was read and how it differs from the published release (a lossy
            or resized copy says so); recorded on every result row as ``data_source``.
    """

    name: str
    num_classes: int
    kind: str
    test: ArraySplit
    train: ArraySplit | None = None
    class_names: tuple[str, ...] = field(default=())
    black_background: bool = False
    source: str = ""

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.test.x.shape[1:])
