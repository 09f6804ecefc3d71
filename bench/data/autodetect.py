"""The offline default dataset: real MNIST where its files can be found, else sklearn's digits."""
from __future__ import annotations

from pathlib import Path

from bench.data import DATASETS
from bench.data.root import MissingDataError, resolve_data_root

# The project's shared folder sits beside the checkout (and beside CI's clone).
OFFLINE_COPIES = (Path(__file__).resolve().parents[2].parent / "shared" / "data",)


def resolve_datasets(option: str, data_root: str | None) -> tuple[Path, tuple[str, ...]]:
    """The data root and dataset names for a ``--dataset`` option.

    ``auto`` means: MNIST under the resolved data root, else MNIST in the shared offline copy,
    else ``digits`` (always available, but too low-dimensional to show a projection's effect).
    """
    root = resolve_data_root(data_root)
    if option != "auto":
        return root, tuple(v.strip() for v in option.split(",") if v.strip())
    for candidate in (root, *OFFLINE_COPIES):
        try:
            DATASETS.get("mnist")(candidate, download=False)
        except MissingDataError:
            continue
        return candidate, ("mnist",)
    return root, ("digits",)
