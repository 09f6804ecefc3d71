"""Datasets: on-disk loaders (one module per format), data-root resolution, splits and partitions.

Each loader is registered in :data:`DATASETS` under its dataset name and has the signature
``load(root: Path, *, download: bool) -> RawDataset``.
"""
from bench.data.types import ArraySplit, RawDataset
from bench.registry import Registry

DATASETS: Registry = Registry("dataset")

__all__ = ["DATASETS", "ArraySplit", "RawDataset"]

# Importing the loader modules runs their @DATASETS.register decorators; they import DATASETS from
# this module, so these imports must stay below its definition.
from bench.data import cifar, digits, gtsrb, har, imagenet, mnist  # noqa: E402,F401
