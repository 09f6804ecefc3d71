"""Executors: where cells run. Records always come back to the driver, which alone writes them.

Each local worker computes on the device :func:`bench.run.placement.worker_devices` deals it (the
GPUs in turn, several workers per GPU allowed); each Ray task asks for a share of a GPU
(:func:`bench.run.placement.ray_gpus_per_task`) and computes on the one Ray assigns it.

Cells that share a trained victim (same ``victim_key``) form one task and run in order in one
worker, so a victim is trained once however many workers there are, and two workers never write the
same checkpoint. Each record streams back the moment its cell ends, not when its task does, so a
run killed mid-task keeps every cell that finished.

A local run that stops early (Ctrl-C, SIGTERM, a record it cannot store) terminates its workers
rather than leave them computing cells nobody will store, and a worker whose driver died without
stopping it (SIGKILL) exits by itself within seconds.
"""
from __future__ import annotations

import dataclasses
import os
import queue
import signal
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Protocol

from bench.run.cell import Cell
from bench.run.cell_runner import execute_cell
from bench.run.placement import ray_gpus_per_task
from bench.run.store import CellRecord

_LONGEST: dict[tuple, float] = {}  # this process's longest wall time per kind of cell (time_kind)


def time_kind(cell: Cell) -> tuple:
    """Cells expected to take about as long as each other: same data, victim, profile, attack and budget."""
    return cell.dataset, cell.victim, cell.profile, cell.attack, cell.attack_params().get("budget", 1.0)


def stream_group(cells: list[Cell], ctx) -> Iterator[CellRecord]:
    """Run ``cells`` in order, yielding each record as its cell ends.

    With a deadline (``ctx.deadline``, a ``time.time()``), a cell starts only if the longest cell of
    its kind this process has run would still end before it; the first of a kind always starts. A
    cell not started leaves no record: it stays to run.
    """
    for cell in cells:
        kind = time_kind(cell)
        if ctx.deadline is not None and time.time() + _LONGEST.get(kind, 0.0) > ctx.deadline:
            continue
        record = execute_cell(cell, ctx)
        _LONGEST[kind] = max(_LONGEST.get(kind, 0.0), record.wall_seconds)
        yield record


def execute_group(cells: list[Cell], ctx) -> int:
    """:func:`stream_group` onto this worker's sink (the queue the driver reads), on this worker's
    device; returns how many records it sent, so the driver knows when it has read them all."""
    if _WORKER_DEVICE is not None:
        ctx = dataclasses.replace(ctx, device=_WORKER_DEVICE)
    sent = 0
    for record in stream_group(cells, ctx):
        _WORKER_SINK.put(record)
        sent += 1
    return sent


def group_by_victim(cells: list[Cell]) -> list[list[Cell]]:
    groups: dict[str, list[Cell]] = defaultdict(list)
    for cell in cells:
        groups[cell.victim_key].append(cell)
    return list(groups.values())


def _fresh(ctx):
    """The context without its in-process data caches (each worker loads and places its own data)."""
    return dataclasses.replace(ctx, _data={}, _placed={})


class Executor(Protocol):
    def run(self, cells: list[Cell], ctx) -> Iterator[CellRecord]: ...


class SerialExecutor:
    """Runs cells one after another in this process."""

    def run(self, cells: list[Cell], ctx) -> Iterator[CellRecord]:
        yield from stream_group(cells, ctx)


_WORKER_DEVICE: str | None = None  # set in each local worker by _init_worker
_WORKER_SINK = None  # the queue a local worker sends its records on, set by _init_worker
ORPHAN_POLL_SECONDS = 1.0


def _init_worker(threads: int, devices=None, sink=None) -> None:
    """Fix the worker's torch threads, take its device from ``devices`` (a queue of the run's
    placement, one entry per worker) and its record ``sink``. A local worker (one with a sink) leaves
    Ctrl-C to its driver, which stops it, and exits when its driver is gone."""
    import torch

    global _WORKER_DEVICE, _WORKER_SINK
    torch.set_num_threads(threads)
    if devices is not None:
        _WORKER_DEVICE = devices.get()
    if sink is not None:
        _WORKER_SINK = sink
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), daemon=True).start()


def _exit_when_orphaned(driver: int) -> None:
    """End this worker once its parent is no longer ``driver`` (the driver died and it was re-parented)."""
    while os.getppid() == driver:
        time.sleep(ORPHAN_POLL_SECONDS)
    os._exit(1)


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel ``pool``'s queued tasks and terminate its workers, mid-cell or not (Python 3.14 has a
    method for it; before, the processes must be taken before shutdown forgets them)."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(timeout=10)


class LocalExecutor:
    """Worker processes on this machine (spawned, one torch thread each unless told otherwise).

    Args:
        jobs: number of worker processes.
        threads_per_job: torch threads in each worker.
        devices: each worker's device (:func:`bench.run.placement.worker_devices`; ``None``: the
            context's, for every worker).
    """

    def __init__(self, *, jobs: int, threads_per_job: int = 1, devices: list[str] | None = None) -> None:
        if jobs < 1 or threads_per_job < 1:
            raise ValueError("jobs and threads_per_job must be >= 1")
        if devices is not None and len(devices) != jobs:
            raise ValueError(f"{len(devices)} devices for {jobs} workers")
        self.jobs, self.threads, self.devices = jobs, threads_per_job, devices

    def run(self, cells: list[Cell], ctx) -> Iterator[CellRecord]:
        spawn = get_context("spawn")
        slots = None
        if self.devices is not None:
            slots = spawn.Queue()
            for device in self.devices:
                slots.put(device)
        sink = spawn.Queue()
        pool = ProcessPoolExecutor(max_workers=self.jobs, mp_context=spawn, initializer=_init_worker,
                                   initargs=(self.threads, slots, sink))
        running = {pool.submit(execute_group, group, _fresh(ctx)) for group in group_by_victim(cells)}
        sent = received = 0
        try:
            while running or received < sent:
                try:
                    record = sink.get(timeout=0.5)
                except queue.Empty:
                    for future in [f for f in running if f.done()]:
                        sent += future.result()  # a worker that died raises here
                        running.discard(future)
                    continue
                received += 1
                yield record
        finally:  # stopped early (interrupted, a record it could not store): stop every worker now
            if running:
                _terminate_workers(pool)
            pool.shutdown(wait=True)


def _stream_group_in_ray(cells: list[Cell], ctx, threads: int, on_gpu: bool) -> Iterator[CellRecord]:
    """:func:`stream_group` with the task's torch threads fixed (as :class:`LocalExecutor`'s workers),
    whatever ``OMP_NUM_THREADS`` the node's environment holds: same seed, same threads, same numbers.
    A task given a GPU computes on it (Ray shows the task only its own: ``cuda:0``)."""
    _init_worker(threads)
    ctx = dataclasses.replace(ctx, device="cuda:0" if on_gpu else "cpu")
    yield from stream_group(cells, ctx)


class RayExecutor:
    """Cells as Ray tasks, on a cluster at ``address`` or on a local Ray instance (``address=None``).

    Every node needs the suite installed and the data under the same data root. With ``device``
    ``auto`` or ``cuda`` each task asks for ``gpus_per_task`` of a GPU (on a cluster with GPUs), so
    ``1 / gpus_per_task`` tasks share each GPU.
    """

    def __init__(self, *, address: str | None = None, num_cpus_per_task: float = 1.0, init_kwargs: dict | None = None,
                 device: str = "cpu", gpus_per_task: float = 0.25):
        self.address, self.num_cpus, self.init_kwargs = address, num_cpus_per_task, dict(init_kwargs or {})
        self.device, self.gpu_share = device, gpus_per_task

    def run(self, cells: list[Cell], ctx) -> Iterator[CellRecord]:
        import ray

        if not ray.is_initialized():
            ray.init(address=self.address, ignore_reinit_error=True, log_to_driver=False, **self.init_kwargs)
        num_gpus = ray_gpus_per_task(self.device, cluster_gpus=ray.cluster_resources().get("GPU", 0), share=self.gpu_share)
        task = ray.remote(num_cpus=self.num_cpus, num_gpus=num_gpus, num_returns="streaming")(_stream_group_in_ray)
        threads = max(1, int(self.num_cpus))
        pending = [task.remote(group, _fresh(ctx), threads, num_gpus > 0) for group in group_by_victim(cells)]
        while pending:
            (ready,), pending = ray.wait(pending, num_returns=1)
            try:
                ref = next(ready)
            except StopIteration:
                continue
            yield ray.get(ref)
            pending.append(ready)
