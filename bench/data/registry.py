"""The dataset registry: name → ``load(root: Path, *, download: bool) -> RawDataset``."""
from bench.registry import Registry

DATASETS: Registry = Registry("dataset")
