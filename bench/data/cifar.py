"""CIFAR-10 and CIFAR-100 from the python-pickle archives torchvision downloads.

Layouts (each also accepted under ``<root>/<dataset-name>/``)::

    <root>/cifar-10-batches-py/data_batch_1 .. data_batch_5, test_batch[, batches.meta]
    <root>/cifar-100-python/train, test[, meta]

Each batch is a pickle holding ``b'data'`` (N, 3072) uint8 and ``b'labels'`` (CIFAR-10) or
``b'fine_labels'`` (CIFAR-100). The test file is required; the training files are optional, but
must be complete when any of them is present. Images are float32 ``(N, 3, 32, 32)`` in [0, 1].

The pickles are trusted input, as in torchvision: only point the loader at archives you downloaded.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from bench.data.files import decode_each, read_all
from bench.data.registry import DATASETS, INPUT_SHAPES, LAYOUTS
from bench.data.root import DatasetLayout, MissingDataError, try_download
from bench.data.types import ArraySplit, RawDataset


@dataclass(frozen=True)
class _Variant:
    folder: str
    train_files: tuple[str, ...]
    test_file: str
    label_key: bytes
    meta_file: str
    names_key: bytes
    num_classes: int
    tv_class: str


_VARIANTS = {
    "cifar10": _Variant(
        "cifar-10-batches-py", tuple(f"data_batch_{i}" for i in range(1, 6)), "test_batch",
        b"labels", "batches.meta", b"label_names", 10, "CIFAR10",
    ),
    "cifar100": _Variant(
        "cifar-100-python", ("train",), "test",
        b"fine_labels", "meta", b"fine_label_names", 100, "CIFAR100",
    ),
}


for _name in _VARIANTS:
    INPUT_SHAPES.register(_name)((3, 32, 32))

LAYOUTS_BY_NAME = {
    name: LAYOUTS.register(name)(DatasetLayout((v.folder, f"{name}/{v.folder}"), (v.test_file,)))
    for name, v in _VARIANTS.items()
}


def _unpickle(path: Path) -> dict:
    with path.open("rb") as f:
        return pickle.load(f, encoding="bytes")


def _read_batches(paths: list[Path], label_key: bytes) -> ArraySplit:
    def read(path: Path) -> tuple[np.ndarray, np.ndarray]:
        batch = _unpickle(path)
        data = np.asarray(batch[b"data"], dtype=np.uint8)
        return data.reshape(-1, 3, 32, 32), np.asarray(batch[label_key], dtype=np.int64)

    xs, ys = zip(*decode_each(paths, read))
    x = torch.from_numpy(np.concatenate(xs).astype(np.float32) / 255.0)
    return ArraySplit(x, torch.from_numpy(np.concatenate(ys)))


def _class_names(folder: Path, variant: _Variant) -> tuple[str, ...]:
    meta = folder / variant.meta_file
    if not meta.is_file():
        return ()
    (contents,) = decode_each([meta], _unpickle)
    names = contents.get(variant.names_key, [])
    return tuple(n.decode() if isinstance(n, bytes) else str(n) for n in names)


def _download(dataset: str, root: Path) -> None:
    from torchvision import datasets

    getattr(datasets, _VARIANTS[dataset].tv_class)(root=str(root), train=False, download=True)


def _load(dataset: str, root: Path, download: bool) -> RawDataset:
    variant = _VARIANTS[dataset]
    layout = LAYOUTS_BY_NAME[dataset]
    folder = layout.find(root)
    reason = ""
    if folder is None and download:
        reason = try_download(lambda: _download(dataset, root)) or ""
        folder = layout.find(root)
    if folder is None:
        raise MissingDataError(
            dataset, root, [variant.test_file], root / variant.folder,
            optional=", ".join(variant.train_files), reason=reason,
        )
    train_paths = [folder / name for name in variant.train_files]
    present = [p for p in train_paths if p.is_file()]
    if present and len(present) != len(train_paths):
        raise MissingDataError(
            dataset, root, [p.name for p in train_paths if not p.is_file()], folder,
            reason="training files incomplete",
        )
    test, train = read_all(lambda: _read_batches([folder / variant.test_file], variant.label_key),
                           lambda: _read_batches(train_paths, variant.label_key) if present else None)
    splits = f"train {len(train):,} + test {len(test):,}" if train is not None else f"test {len(test):,} only"
    return RawDataset(
        name=dataset,
        num_classes=variant.num_classes,
        kind="image",
        test=test,
        train=train,
        class_names=_class_names(folder, variant),
        source=f"{variant.folder} python pickles, lossless ({splits})",
    )


@DATASETS.register("cifar10")
def load_cifar10(root: Path, *, download: bool = False) -> RawDataset:
    """CIFAR-10 as float32 ``(N, 3, 32, 32)`` in [0, 1].

    Args:
        root: the data root.
        download: fetch the archive with torchvision when the test batch is missing.

    Raises:
        MissingDataError: when ``test_batch`` is not there (and could not be downloaded), or when
            only some of the training batches are.
        DataFileError: naming every batch that cannot be unpickled or lacks its arrays.
    """
    return _load("cifar10", Path(root), download)


@DATASETS.register("cifar100")
def load_cifar100(root: Path, *, download: bool = False) -> RawDataset:
    """CIFAR-100 (fine labels), same conventions as :func:`load_cifar10`."""
    return _load("cifar100", Path(root), download)
