"""Snapshots of a watched training run at every epoch's end, so that a co-training cell stopped part
way (a session's end, a killed worker) resumes at its last finished epoch instead of from the start.

A snapshot holds the run's own state (:meth:`~bench.run.engine.SplitTrainer.progress_state`), the
loaders' generator, every global random stream and each watching attack's state
(:meth:`~attacks.base.CotrainAttack.progress_state`). A resumed run therefore draws and computes
exactly what the uninterrupted run would have, and the cell's numbers are the same. A snapshot is
keyed by the cell, the code that runs the victim and the attack, and the machine; one that
does not load is deleted with one warning line and the run starts afresh. When the run ends, the
cell's snapshots are deleted, those of older code too. Unlike a victim checkpoint a snapshot is
pickled Python (the attack's networks and optimizers as objects), so it is only ever read from the
run's own cache folder.
"""
from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from bench.run.cache_layout import snapshot_file, snapshot_files
from bench.run.cell import Cell
from bench.run.checkpoints import (
    atomic_torch_save,
    check_fits,
    code_digest,
    code_files,
    failure_reason,
    source_files,
    victim_code_hash,
)
from bench.run.device import device_provenance, rng_devices
from bench.run.engine import SplitModel, SplitTrainer
from bench.run.provenance import environment
from bench.run.warn import warn

if TYPE_CHECKING:
    from attacks.base import CotrainAttack

# The code that runs a watched run besides the victim's (relative to the repository root).
PROGRESS_CODE = ("attacks", "bench/run")
RESUMED_SECONDS = "resumed_seconds"  # the metric: seconds the stopped runs of a resumed cell spent


@dataclass(frozen=True)
class Resumed:
    """Where a snapshot left the run: epochs finished, the last epoch's mean loss, seconds spent."""

    epochs: int
    loss: float
    seconds: float


def progress_path(cell: Cell, model: SplitModel, observers: Sequence[CotrainAttack], cache_dir: Path) -> Path:
    """``cache_dir/progress/<cell id>-<hash>.pt``: the hash covers the victim's code,
    :data:`PROGRESS_CODE`, the files of the observers' classes and :func:`machine`, so a run never
    resumes under other code or on another kind of machine (whose float results differ)."""
    files = code_files(PROGRESS_CODE) | source_files(type(observer) for observer in observers)
    device = next(iter(model.parameters())).device
    key = "\0".join([victim_code_hash(model, cell), code_digest(files), *machine(device)])
    return snapshot_file(cache_dir, cell.id, hashlib.sha256(key.encode()).hexdigest()[:12])


def machine(device: torch.device) -> list[str]:
    """What a run's float results hang on besides the code: the library versions, the processor, the
    torch threads and the device (a GPU's name), as the rows' provenance names them."""
    env = environment()
    kept = sorted(f"{k}={v}" for k, v in env.items() if k.startswith("version_") or k in ("python", "cpu", "cpu_capability"))
    return [*kept, f"torch_threads={torch.get_num_threads()}", f"device={device_provenance(str(device))['device_name']}"]


def _random_streams() -> dict[str, Any]:
    return {
        "torch": torch.get_rng_state(), "cuda": [torch.cuda.get_rng_state(d) for d in rng_devices()],
        "numpy": np.random.get_state(), "python": random.getstate(),
    }


def _restore_random_streams(streams: dict[str, Any]) -> None:
    torch.set_rng_state(streams["torch"])
    for device, state in zip(rng_devices(), streams["cuda"], strict=True):
        torch.cuda.set_rng_state(state, device)
    np.random.set_state(streams["numpy"])
    random.setstate(streams["python"])


def save_progress(
    path: Path, *, cell: Cell, trainer: SplitTrainer, generator: torch.Generator, loss: float, seconds: float,
) -> bool:
    """Snapshot the run after ``trainer.epoch`` epochs; whether it was written. A snapshot that cannot
    be written (an attack holding something that does not pickle, a full disk) is one warning line
    and the run goes on."""
    snapshot = {
        "cell": cell.id, "run": trainer.progress_state(), "generator": generator.get_state(),
        "random": _random_streams(), "observers": [observer.progress_state() for observer in trainer.observers],
        "loss": loss, "seconds": seconds,
    }
    try:
        atomic_torch_save(snapshot, path)
    except Exception as err:  # noqa: BLE001 - a snapshot is only a cache: the run goes on
        warn(f"progress snapshot {path} could not be written ({failure_reason(err)}); this run cannot resume part way")
        return False
    return True


def load_progress(path: Path, *, cell: Cell, trainer: SplitTrainer, generator: torch.Generator) -> Resumed | None:
    """Put the run, its generator, the random streams and its observers where the snapshot at ``path``
    left them; ``None`` when there is none. One that does not load, or whose tensors do not fit the
    model, is deleted with one warning line, the run untouched (``None``: it starts from its first epoch)."""
    if not path.exists():
        return None
    try:
        saved = torch.load(path, weights_only=False)  # each tensor back on the device kind it was saved from
        if saved["cell"] != cell.id:
            raise ValueError(f"it belongs to cell {saved['cell']}")
        if len(saved["observers"]) != len(trainer.observers):
            raise ValueError("it was watched by another number of attacks")
        check_fits(saved["run"]["model"], trainer.model)
    except Exception as err:  # noqa: BLE001 - any damage: the snapshot is only a cache
        path.unlink(missing_ok=True)
        warn(f"progress snapshot {path} is unusable ({failure_reason(err)}); deleted, the run starts from its first epoch")
        return None
    trainer.load_progress_state(saved["run"])
    generator.set_state(saved["generator"])
    _restore_random_streams(saved["random"])
    for observer, state in zip(trainer.observers, saved["observers"], strict=True):
        observer.resume_from(state)
    return Resumed(epochs=trainer.epoch, loss=saved["loss"], seconds=saved["seconds"])


def drop_progress(cache_dir: Path, cell: Cell) -> None:
    """Delete every snapshot of ``cell`` in ``cache_dir``, those of older code or other machines too."""
    for stale in snapshot_files(cache_dir, cell.id):
        stale.unlink(missing_ok=True)
