"""The dataset registries: name → loader, name → the on-disk layout its loader looks for, and name →
the shape of one input its loader yields (where fixed: a grid checks a defense's knobs against the
victim's cut at that shape before anything runs)."""
from bench.registry import Registry

DATASETS: Registry = Registry("dataset")
"""name → ``load(root: Path, *, download: bool) -> RawDataset``."""

LAYOUTS: Registry = Registry("dataset layout")
"""name → :class:`bench.data.root.DatasetLayout`; ``bench list`` reports where each was found."""

INPUT_SHAPES: Registry = Registry("dataset input shape")
"""name → ``(C, H, W)`` of one input, for the datasets whose loader always yields that shape."""
