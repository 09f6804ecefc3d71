"""GTSRB (German Traffic Sign Recognition Benchmark) in torchvision's layout.

Layout (also accepted as ``<root>/gtsrb/gtsrb/...`` and, when the data root is the ``gtsrb``
folder itself, as ``<root>/GTSRB/...``)::

    <root>/gtsrb/GTSRB/Training/<5-digit class id>/*.ppm          (optional)
    <root>/gtsrb/GTSRB/Final_Test/Images/*.ppm
    <root>/gtsrb/GT-final_test.csv                                 (Filename;...;ClassId)

Images vary in size (15 to 250 pixels a side); every one is resized to 32x32 with PIL's bilinear
filter, giving float32 ``(N, 3, 32, 32)`` in [0, 1]. There are 43 classes.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from bench.data.files import decode_each, read_all
from bench.data.registry import DATASETS, INPUT_SHAPES, LAYOUTS
from bench.data.root import DatasetLayout, MissingDataError, try_download
from bench.data.types import ArraySplit, RawDataset

NUM_CLASSES = 43
IMAGE_SIZE = 32
_TEST_IMAGES = "GTSRB/Final_Test/Images"
_TEST_CSV = "GT-final_test.csv"
_TRAIN_DIR = "GTSRB/Training"
LAYOUT = LAYOUTS.register("gtsrb")(DatasetLayout(("gtsrb", "gtsrb/gtsrb", "."), (_TEST_IMAGES, _TEST_CSV)))
INPUT_SHAPES.register("gtsrb")((3, IMAGE_SIZE, IMAGE_SIZE))


def _read_image(path: Path, sizes: set[tuple[int, int]]) -> np.ndarray:
    with Image.open(path) as image:
        sizes.add(image.size)
        rgb = image.convert("RGB")
        resized = rgb.resize((IMAGE_SIZE, IMAGE_SIZE), Image.Resampling.BILINEAR)
        return np.asarray(resized, dtype=np.uint8)


def _to_split(paths: list[Path], labels: list[int], sizes: set[tuple[int, int]]) -> ArraySplit:
    if not paths:
        x = torch.zeros((0, 3, IMAGE_SIZE, IMAGE_SIZE), dtype=torch.float32)
        return ArraySplit(x, torch.zeros(0, dtype=torch.int64))
    stacked = np.stack(decode_each(paths, lambda p: _read_image(p, sizes)))  # (N, H, W, 3)
    x = torch.from_numpy(stacked.astype(np.float32) / 255.0).permute(0, 3, 1, 2).contiguous()
    return ArraySplit(x, torch.tensor(labels, dtype=torch.int64))


def _read_test(base: Path, sizes: set[tuple[int, int]]) -> ArraySplit:
    paths, labels = [], []
    with (base / _TEST_CSV).open(newline="") as f:
        for row in csv.DictReader(f, delimiter=";", skipinitialspace=True):
            paths.append(base / _TEST_IMAGES / row["Filename"])
            labels.append(int(row["ClassId"]))
    return _to_split(paths, labels, sizes)


def _read_train(base: Path, sizes: set[tuple[int, int]]) -> ArraySplit | None:
    train_dir = base / _TRAIN_DIR
    if not train_dir.is_dir():
        return None
    paths, labels = [], []
    for class_dir in sorted(d for d in train_dir.iterdir() if d.is_dir() and d.name.isdigit()):
        for image in sorted(class_dir.glob("*.ppm")):
            paths.append(image)
            labels.append(int(class_dir.name))
    return _to_split(paths, labels, sizes) if paths else None


def _download(root: Path) -> None:
    from torchvision import datasets

    datasets.GTSRB(root=str(root), split="test", download=True)
    datasets.GTSRB(root=str(root), split="train", download=True)


@DATASETS.register("gtsrb")
def load(root: Path, *, download: bool = False) -> RawDataset:
    """GTSRB resized to 32x32; ``train`` is ``None`` when ``GTSRB/Training`` is absent.

    Args:
        root: the data root.
        download: fetch both splits with torchvision when the test split is missing.

    Raises:
        MissingDataError: when the test images or ``GT-final_test.csv`` are not there (and could not
            be downloaded).
        DataFileError: naming every image that cannot be decoded.
    """
    root = Path(root)
    base = LAYOUT.find(root)
    reason = ""
    if base is None and download:
        reason = try_download(lambda: _download(root)) or ""
        base = LAYOUT.find(root)
    if base is None:
        raise MissingDataError(
            "gtsrb", root, [f"{_TEST_IMAGES}/*.ppm", _TEST_CSV], root / "gtsrb",
            optional=f"{_TRAIN_DIR}/<class>/*.ppm", reason=reason,
        )
    sizes: set[tuple[int, int]] = set()
    test, train = read_all(lambda: _read_test(base, sizes), lambda: _read_train(base, sizes))
    splits = f"train {len(train):,} + test {len(test):,}" if train is not None else f"test {len(test):,} only"
    # A copy whose every image is already 32x32 was resized before it reached us (the originals
    # range from 15 to 250 pixels a side): say so on every row.
    resized = "copy already resized to 32x32" if sizes == {(IMAGE_SIZE, IMAGE_SIZE)} else "resized here to 32x32"
    return RawDataset(
        name="gtsrb",
        num_classes=NUM_CLASSES,
        kind="image",
        test=test,
        train=train,
        source=f"GTSRB .ppm files, {resized} ({splits})",
    )
