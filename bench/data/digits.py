"""scikit-learn's 8x8 handwritten digits, upsampled to MNIST's 28x28 shape.

Always available (it ships with scikit-learn), so it needs no data root and is the dataset of choice
for offline smoke tests. The 1,797 images are scaled from 0..16 to [0, 1] and bilinearly upsampled
to float32 ``(N, 1, 28, 28)``; everything is returned as ``test`` (``train`` is ``None``).

Warning:
    The upsampled images still span at most 64 dimensions (one per original pixel): a defense that
    projects onto ``k >= 64`` directions removes almost nothing on this dataset, and results on it
    say little about such defenses on real 28x28 data.
"""
from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from bench.data.registry import DATASETS, INPUT_SHAPES
from bench.data.types import ArraySplit, RawDataset

IMAGE_SIZE = 28
INPUT_SHAPES.register("digits")((1, IMAGE_SIZE, IMAGE_SIZE))


@DATASETS.register("digits")
def load(root: Path | None = None, *, download: bool = False) -> RawDataset:
    """The digits as float32 ``(1797, 1, 28, 28)`` in [0, 1], 10 classes, all in ``test``.

    Args:
        root: ignored; accepted for a uniform loader signature.
        download: ignored; the data ships with scikit-learn.
    """
    from sklearn.datasets import load_digits  # deferred: scikit-learn is slow to import

    bunch = load_digits()
    x = torch.as_tensor(bunch.images, dtype=torch.float32).unsqueeze(1) / 16.0
    x = F.interpolate(x, size=(IMAGE_SIZE, IMAGE_SIZE), mode="bilinear", align_corners=False)
    y = torch.as_tensor(bunch.target, dtype=torch.int64)
    return RawDataset(
        name="digits",
        num_classes=10,
        kind="image",
        test=ArraySplit(x.clamp_(0.0, 1.0).contiguous(), y),
        train=None,
        class_names=tuple(str(i) for i in range(10)),
        black_background=True,
        source="scikit-learn's 8x8 digits, bilinearly upsampled to 28x28",
    )
