"""The options of a run that are not grid axes: where it is stored, where data is, how it is executed."""
from __future__ import annotations

from dataclasses import dataclass

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class RunOptions:
    """How a grid runs and where it is stored (``bench run``'s options of the same names).

    Attributes:
        out: the results folder, relative to the current directory.
        data_root: the data folder (``None``: ``$BENCH_DATA_ROOT``, else the cache folder).
        download: download missing data when a network exists.
        executor: ``local`` (``jobs`` worker processes) or ``ray``.
        jobs: local worker processes.
        address: the Ray cluster's address (``None``: start a local Ray instance).
    """

    out: str = "results/latest"
    data_root: str | None = None
    download: bool = True
    executor: str = "local"
    jobs: int = 1
    address: str | None = None
