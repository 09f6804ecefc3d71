"""ImageNet (or any ImageNet-style subset) from class folders, as a small in-memory profile.

Layout (also accepted as ``<root>/imagenet/imagenet/...`` and, when the data root is the
ImageNet folder itself, as ``<root>/{train,val}/...``)::

    <root>/imagenet/train/<wnid>/*.(JPEG|jpg|png)    (optional)
    <root>/imagenet/val/<wnid>/*.(JPEG|jpg|png)

This is a profile-sized loader, not a full ImageNet pipeline: everything is decoded into one tensor,
so it reads at most ``max_per_class`` images per class and split (the first ones in file-name
order) and shrinks them to 64x64 — the shorter side is resized to 64 (bilinear), then the centre
64x64 is cropped, so objects are not distorted. The full 1.28M images would not fit this
design; train on them with a streaming loader instead.

Classes are the sorted folder names of ``train`` (of ``val`` when ``train`` is absent); a ``val``
folder whose name is not a training class is an error. ImageNet is never downloaded (its licence
requires a manual download).
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

IMAGE_SIZE = 64
DEFAULT_MAX_PER_CLASS = 50
_EXTENSIONS = {".jpeg", ".jpg", ".png"}
LAYOUT = LAYOUTS.register("imagenet")(DatasetLayout(("imagenet", "imagenet/imagenet", "."), ("val/*/",)))
INPUT_SHAPES.register("imagenet")((3, IMAGE_SIZE, IMAGE_SIZE))


def _read_image(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        rgb = image.convert("RGB")
        width, height = rgb.size
        scale = IMAGE_SIZE / min(width, height)
        new_w = max(IMAGE_SIZE, round(width * scale))
        new_h = max(IMAGE_SIZE, round(height * scale))
        rgb = rgb.resize((new_w, new_h), Image.Resampling.BILINEAR)
        left = (new_w - IMAGE_SIZE) // 2
        top = (new_h - IMAGE_SIZE) // 2
        cropped = rgb.crop((left, top, left + IMAGE_SIZE, top + IMAGE_SIZE))
        return np.asarray(cropped, dtype=np.uint8)


def _class_dirs(split_dir: Path) -> list[Path]:
    return sorted(d for d in split_dir.iterdir() if d.is_dir())


def _read_split(split_dir: Path, class_index: dict[str, int], max_per_class: int) -> ArraySplit:
    paths, labels = [], []
    for class_dir in _class_dirs(split_dir):
        if class_dir.name not in class_index:
            raise ValueError(f"{class_dir}: class '{class_dir.name}' is not a training class")
        files = sorted(p for p in class_dir.iterdir() if p.suffix.lower() in _EXTENSIONS)
        for path in files[:max_per_class]:
            paths.append(path)
            labels.append(class_index[class_dir.name])
    arrays = decode_each(paths, _read_image)
    if not arrays:
        x = torch.zeros((0, 3, IMAGE_SIZE, IMAGE_SIZE), dtype=torch.float32)
        return ArraySplit(x, torch.zeros(0, dtype=torch.int64))
    stacked = np.stack(arrays)  # (N, H, W, 3)
    x = torch.from_numpy(stacked.astype(np.float32) / 255.0).permute(0, 3, 1, 2).contiguous()
    return ArraySplit(x, torch.tensor(labels, dtype=torch.int64))


@DATASETS.register("imagenet")
def load(
    root: Path, *, download: bool = False, max_per_class: int = DEFAULT_MAX_PER_CLASS
) -> RawDataset:
    """Up to ``max_per_class`` images per class and split, float32 ``(N, 3, 64, 64)`` in [0, 1].

    Args:
        root: the data root.
        download: accepted for a uniform signature; ImageNet is never downloaded.
        max_per_class: images read per class in each split.

    Raises:
        MissingDataError: when ``imagenet/val/<wnid>/`` folders are not there.
        DataFileError: naming every image read that cannot be decoded.
        ValueError: when ``max_per_class < 1`` or ``val`` has a class that ``train`` lacks.
    """
    if max_per_class < 1:
        raise ValueError(f"max_per_class must be >= 1, got {max_per_class}")
    root = Path(root)
    base = LAYOUT.find(root)
    if base is None:
        raise MissingDataError(
            "imagenet", root, ["val/<wnid>/*.JPEG"], root / "imagenet",
            optional="train/<wnid>/*.JPEG",
            reason="ImageNet is never downloaded" if download else "",
        )
    train_dir = base / "train"
    has_train = train_dir.is_dir() and bool(_class_dirs(train_dir))
    classes = [d.name for d in _class_dirs(train_dir if has_train else base / "val")]
    class_index = {name: i for i, name in enumerate(classes)}
    test, train = read_all(lambda: _read_split(base / "val", class_index, max_per_class),
                           lambda: _read_split(train_dir, class_index, max_per_class) if has_train else None)
    return RawDataset(
        name="imagenet",
        num_classes=len(classes),
        kind="image",
        test=test,
        train=train,
        class_names=tuple(classes),
        source="ImageNet JPEG folders" + (" (train + val)" if has_train else " (val only)"),
    )
