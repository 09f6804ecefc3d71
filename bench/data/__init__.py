"""Datasets: on-disk loaders (one module per format), data-root resolution, splits and partitions.

Each loader is registered in :data:`DATASETS` under its dataset name and has the signature
``load(root: Path, *, download: bool) -> RawDataset``.
"""
from bench.data import cifar, cifar_folder, digits, gtsrb, hapt, har, imagenet, mnist, wikitext  # noqa: F401  (registration)
from bench.data.registry import DATASETS, INPUT_SHAPES, LAYOUTS
from bench.data.types import ArraySplit, RawDataset

__all__ = ["DATASETS", "INPUT_SHAPES", "LAYOUTS", "ArraySplit", "RawDataset"]
