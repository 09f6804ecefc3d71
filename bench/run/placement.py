"""Where each worker of a run computes: local workers spread over a machine's GPUs, Ray tasks asking
for a share of one.

The placement is a pure function of the device asked for and the GPU inventory, so it is tested on
the CPU against made-up inventories.
"""
from __future__ import annotations

from bench.run.device import resolve_device
from bench.run.run_options import DeviceError, check_device_name


def worker_devices(device: str, *, jobs: int, gpu_count: int) -> list[str]:
    """The device of each of ``jobs`` local workers on a machine with ``gpu_count`` GPUs.

    ``cpu`` (or ``auto`` without a GPU) puts every worker on the CPU; ``auto`` and ``cuda`` deal the
    workers over the GPUs in turn (worker ``i`` on ``cuda:i mod G``, several per GPU when ``jobs`` >
    ``G``); ``cuda:N`` puts every worker on that GPU.

    Raises:
        DeviceError: a misspelt device, CUDA without a GPU, or ``cuda:N`` past the last GPU.
        ValueError: ``jobs`` < 1.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    check_device_name(device)
    if device in ("auto", "cuda") and gpu_count > 0:
        return [f"cuda:{i % gpu_count}" for i in range(jobs)]
    return [resolve_device(device, gpu_count=gpu_count)] * jobs


def ray_gpus_per_task(device: str, *, cluster_gpus: float, share: float) -> float:
    """The ``num_gpus`` each Ray task asks for: ``share`` of a GPU (several tasks per GPU at a share
    under 1) where the run computes on GPUs, else 0.

    Raises:
        DeviceError: a misspelt device, a named GPU (a Ray task cannot pick one: Ray assigns it), or
            CUDA asked for on a cluster without GPUs.
        ValueError: ``share`` outside (0, 1].
    """
    check_device_name(device)
    if not 0 < share <= 1:
        raise ValueError(f"the GPU share of a Ray worker must be in (0, 1], got {share}")
    if device.startswith("cuda:"):
        raise DeviceError(f"device '{device}' names a GPU; on Ray use --device cuda or auto (Ray assigns each task its GPU)")
    if device == "cpu" or (device == "auto" and cluster_gpus == 0):
        return 0.0
    if cluster_gpus == 0:
        raise DeviceError(f"device '{device}' asked for, but the Ray cluster has no GPU; use --device cpu")
    return share
