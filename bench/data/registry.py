"""The dataset registries: name → loader, and name → the on-disk layout its loader looks for."""
from bench.registry import Registry

DATASETS: Registry = Registry("dataset")
"""name → ``load(root: Path, *, download: bool) -> RawDataset``."""

LAYOUTS: Registry = Registry("dataset layout")
"""name → :class:`bench.data.root.DatasetLayout`; ``bench list`` reports where each was found."""
