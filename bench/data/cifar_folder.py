"""CIFAR-10 from a class-per-folder image layout (one image file per sample).

Layout (also accepted when the data root is the dataset folder itself)::

    <root>/cifar10-jpeg/test/<class>/*.{jpg,jpeg,png}
    <root>/cifar10-jpeg/train/<class>/*.{jpg,jpeg,png}      (optional)

``<class>`` is one of CIFAR-10's ten class names; the label is its index in CIFAR-10's label order
(airplane 0 … truck 9), whatever order the folders list in. Every image must be 32×32; it is read as
RGB into float32 ``(N, 3, 32, 32)`` in [0, 1], files in sorted name order.

The dataset is registered as ``cifar10-jpeg`` and not as ``cifar10`` because the public copies in
this layout are re-encoded: JPEG is lossy (the shared copy is at about quality 75), so its numbers
must never be mixed with the lossless release's. Every row records the file format it was read from.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from PIL import Image

from bench.data.files import decode_each, read_all
from bench.data.registry import DATASETS, INPUT_SHAPES, LAYOUTS
from bench.data.root import DatasetLayout, MissingDataError
from bench.data.types import ArraySplit, RawDataset

CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
IMAGE_SIZE = 32
_SUFFIXES = {".jpg": "JPEG", ".jpeg": "JPEG", ".png": "PNG"}
LAYOUT = LAYOUTS.register("cifar10-jpeg")(DatasetLayout(("cifar10-jpeg", "."), ("test/*/",)))
INPUT_SHAPES.register("cifar10-jpeg")((3, IMAGE_SIZE, IMAGE_SIZE))


def _read_image(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        if image.size != (IMAGE_SIZE, IMAGE_SIZE):
            raise ValueError(f"{image.size[0]}x{image.size[1]} pixels, expected 32x32")
        return np.asarray(image.convert("RGB"), dtype=np.uint8)


def _read_split(folder: Path, formats: set[str]) -> ArraySplit:
    unknown = sorted(d.name for d in folder.iterdir() if d.is_dir() and d.name not in CLASSES)
    if unknown:
        raise ValueError(f"{folder}: folder '{unknown[0]}' is not a CIFAR-10 class ({', '.join(CLASSES)})")
    paths, labels = [], []
    for label, name in enumerate(CLASSES):
        class_dir = folder / name
        if not class_dir.is_dir():
            continue
        for path in sorted(p for p in class_dir.iterdir() if p.suffix.lower() in _SUFFIXES):
            paths.append(path)
            formats.add(_SUFFIXES[path.suffix.lower()])
            labels.append(label)
    images = decode_each(paths, _read_image)
    if not images:
        raise ValueError(f"{folder}: no .jpg, .jpeg or .png images in any class folder")
    x = torch.from_numpy(np.stack(images).astype(np.float32) / 255.0).permute(0, 3, 1, 2).contiguous()
    return ArraySplit(x, torch.tensor(labels, dtype=torch.int64))


@DATASETS.register("cifar10-jpeg")
def load(root: Path, *, download: bool = False) -> RawDataset:
    """CIFAR-10 read from ``test/<class>/`` (and ``train/<class>/``) image files.

    Args:
        root: the data root.
        download: ignored: no image-folder copy is downloaded (``cifar10`` reads the official
            archive and can fetch it).

    Raises:
        MissingDataError: when ``test/<class>/`` folders are not there.
        DataFileError: naming every image that cannot be decoded or is not 32×32.
        ValueError: on a folder that is not a CIFAR-10 class, or a split without images.
    """
    root = Path(root)
    base = LAYOUT.find(root)
    if base is None:
        raise MissingDataError(
            "cifar10-jpeg", root, ["test/<class>/*.jpg"], root / "cifar10-jpeg",
            optional="train/<class>/*.jpg", reason="image-folder copies are never downloaded" if download else "",
        )
    formats: set[str] = set()
    test, train = read_all(lambda: _read_split(base / "test", formats),
                           lambda: _read_split(base / "train", formats) if (base / "train").is_dir() else None)
    splits = f"train {len(train):,} + test {len(test):,}" if train is not None else f"test {len(test):,} only"
    lossy = ", lossy" if "JPEG" in formats else ""
    return RawDataset(
        name="cifar10-jpeg",
        num_classes=len(CLASSES),
        kind="image",
        test=test,
        train=train,
        class_names=CLASSES,
        source=f"CIFAR-10 as {'/'.join(sorted(formats))} files in class folders{lossy} ({splits})",
    )
