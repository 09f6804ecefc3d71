"""The options of a run that are not grid axes: where it is stored, where data is, how and where it is
executed, with which arithmetic. None of them changes a cell's id."""
from __future__ import annotations

import re
from dataclasses import dataclass

EXECUTORS = ("local", "ray")
AUTOCAST = ("none", "bf16")  # the autocast policies (bench.run.device.Numerics)
_DEVICE = re.compile(r"^(auto|cpu|cuda|cuda:\d+)$")


class DeviceError(ValueError):
    """A device that is misspelt or absent on this machine."""


def check_device_name(name: str) -> str:
    """``name`` if it is ``auto``, ``cpu``, ``cuda`` or ``cuda:N``.

    Raises:
        DeviceError: otherwise, naming the accepted spellings.
    """
    if not isinstance(name, str) or not _DEVICE.match(name):
        raise DeviceError(f"device '{name}' is not one of auto, cpu, cuda, cuda:N")
    return name


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
        device: ``auto`` (CUDA when present, else the CPU), ``cpu``, ``cuda`` or ``cuda:N``; local
            workers are dealt over the GPUs (:func:`bench.run.placement.worker_devices`).
        gpus_per_worker: the share of a GPU each Ray worker asks for (0.25: four per GPU).
        tf32: TF32 matrix products and convolutions on GPUs (default: IEEE float32).
        autocast: ``none`` or ``bf16`` (``torch.autocast`` around training and attacks).
        deterministic: PyTorch's deterministic algorithms.
        time_budget: seconds after which no cell starts that would not end in time (``None``: no limit).
        threads: torch threads each cell runs with, in this process or a worker (recorded on every row
            as ``torch_threads``): one cell id gives the same numbers with any ``jobs``.
    """

    out: str = "results/latest"
    data_root: str | None = None
    download: bool = True
    executor: str = "local"
    jobs: int = 1
    address: str | None = None
    device: str = "auto"
    gpus_per_worker: float = 0.25
    tf32: bool = False
    autocast: str = "none"
    deterministic: bool = False
    time_budget: float | None = None
    threads: int = 1
