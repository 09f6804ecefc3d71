"""MNIST and Fashion-MNIST from torchvision's raw idx layout.

Files are read from ``<root>/MNIST/raw/`` (or ``<root>/mnist/MNIST/raw/``) and
``<root>/FashionMNIST/raw/`` (or ``<root>/fashion-mnist/FashionMNIST/raw/``)::

    {train,t10k}-images-idx3-ubyte[.gz]
    {train,t10k}-labels-idx1-ubyte[.gz]

The idx files are parsed here with numpy, gzipped or not; torchvision's processed ``.pt`` files are
never used. The ``t10k`` pair is required; the ``train`` pair is optional (the offline MNIST copy
has only the test files), and without it ``RawDataset.train`` is ``None``.
"""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import torch

from bench.data.files import decode_each, read_all
from bench.data.registry import DATASETS, INPUT_SHAPES, LAYOUTS
from bench.data.root import DatasetLayout, MissingDataError, try_download
from bench.data.types import ArraySplit, RawDataset

_IMAGES_MAGIC = 2051
_LABELS_MAGIC = 2049
_FASHION_CLASSES = (
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
)
# registry name -> (torchvision folder, torchvision dataset class name, class names)
_VARIANTS = {
    "mnist": ("MNIST", "MNIST", tuple(str(i) for i in range(10))),
    "fashion-mnist": ("FashionMNIST", "FashionMNIST", _FASHION_CLASSES),
}


def read_idx(path: Path) -> np.ndarray:
    """Parse one idx file (``.gz`` or plain) into a uint8 array shaped by its header.

    Raises:
        ValueError: on an unexpected magic number, element type or size.
    """
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise ValueError("not an unsigned-byte idx file")
    ndim = raw[3]
    dims = tuple(int(d) for d in np.frombuffer(raw, dtype=">i4", count=ndim, offset=4))
    offset = 4 + 4 * ndim
    if len(raw) - offset != int(np.prod(dims)):
        raise ValueError(f"header says {dims} but {len(raw) - offset} bytes follow")
    return np.frombuffer(raw, dtype=np.uint8, offset=offset).reshape(dims)


def _find_file(folder: Path, stem: str) -> Path | None:
    # torchvision keeps both the .gz and the extracted file; the plain one is faster to read
    for name in (stem, f"{stem}.gz"):
        if (folder / name).is_file():
            return folder / name
    return None


def _read_split(folder: Path, prefix: str) -> ArraySplit | None:
    images = _find_file(folder, f"{prefix}-images-idx3-ubyte")
    labels = _find_file(folder, f"{prefix}-labels-idx1-ubyte")
    if images is None or labels is None:
        return None
    x, y = decode_each([images, labels], read_idx)
    if x.ndim != 3 or y.ndim != 1:
        raise ValueError(f"{folder}: {prefix} images have shape {x.shape}, labels {y.shape}")
    x_t = torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1)
    return ArraySplit(x_t, torch.from_numpy(y.astype(np.int64)))


for _name in _VARIANTS:
    INPUT_SHAPES.register(_name)((1, 28, 28))

LAYOUTS_BY_NAME = {
    name: LAYOUTS.register(name)(DatasetLayout(
        (f"{folder}/raw", f"{name}/{folder}/raw"), ("t10k-images-idx3-ubyte*", "t10k-labels-idx1-ubyte*")
    ))
    for name, (folder, _, _) in _VARIANTS.items()
}


def _download(dataset: str, root: Path) -> None:
    from torchvision import datasets

    tv_class = getattr(datasets, _VARIANTS[dataset][1])
    tv_class(root=str(root), train=False, download=True)


def _load(dataset: str, root: Path, download: bool) -> RawDataset:
    sub = f"{_VARIANTS[dataset][0]}/raw"
    layout = LAYOUTS_BY_NAME[dataset]
    folder = layout.find(root)
    reason = ""
    if folder is None and download:
        reason = try_download(lambda: _download(dataset, root)) or ""
        folder = layout.find(root)
    test, train = read_all(lambda: _read_split(folder, "t10k"), lambda: _read_split(folder, "train")) if folder else (None, None)
    if folder is None or test is None:
        raise MissingDataError(
            dataset,
            root,
            ["t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"],
            root / sub,
            optional="the train-* files",
            reason=reason,
        )
    splits = f"train {len(train):,} + test {len(test):,}" if train is not None else f"test {len(test):,} only"
    return RawDataset(
        name=dataset,
        num_classes=10,
        kind="image",
        test=test,
        train=train,
        source=f"{_VARIANTS[dataset][0]} idx files ({splits})",
        class_names=_VARIANTS[dataset][2],
        black_background=True,
    )


@DATASETS.register("mnist")
def load_mnist(root: Path, *, download: bool = False) -> RawDataset:
    """MNIST as float32 ``(N, 1, 28, 28)`` in [0, 1]; ``train`` is ``None`` without the train files.

    Args:
        root: the data root.
        download: fetch the files with torchvision when the test files are missing.

    Raises:
        MissingDataError: when the test files are not there (and could not be downloaded).
        DataFileError: naming every idx file that cannot be read (cut short, not gzip, a wrong header).
    """
    return _load("mnist", Path(root), download)


@DATASETS.register("fashion-mnist")
def load_fashion_mnist(root: Path, *, download: bool = False) -> RawDataset:
    """Fashion-MNIST, same layout and conventions as :func:`load_mnist`."""
    return _load("fashion-mnist", Path(root), download)
