"""Train the victim of a cell (or load it from the cache keyed by the victim part of the cell and
the code that shapes a victim)."""
from __future__ import annotations

import random
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor

from bench.data.splits import CarvedData, partition
from bench.leakage.measures import attack_free_measures
from bench.profiles import Profile
from bench.run.cell import Cell
from bench.run.channel import DOWN, UP
from bench.run.checkpoints import checkpoint_path, load_checkpoint, save_checkpoint
from bench.run.device import current_device, forked_rng, seeded_permutation
from bench.run.engine import SplitModel, SplitTrainer, accuracy
from bench.run.progress import Resumed, drop_progress, load_progress, progress_path, save_progress
from bench.run.warn import warn
from defenses import build_defense
from victims import VICTIMS

if TYPE_CHECKING:
    from attacks.base import ActiveAttack, CotrainAttack


_UNCACHED: set[Path] = set()  # cache folders a checkpoint could not be written to, warned about once


@dataclass
class TrainedVictim:
    """A trained split model, its utility metrics and the client partition it was trained on."""

    model: SplitModel
    metrics: dict[str, float]
    client_indices: list[Tensor]
    from_cache: bool = False
    resumed: Resumed | None = None  # where a snapshot of a stopped watched run let this one start


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def batches(x: Tensor, y: Tensor, *, batch_size: int, generator: torch.Generator) -> Iterator[tuple[Tensor, Tensor]]:
    """Shuffled mini-batches; a last partial batch is kept unless it has a single sample (BatchNorm)."""
    order = seeded_permutation(len(y), generator, device=y.device)  # moved once an epoch
    for start in range(0, len(y), batch_size):
        idx = order[start : start + batch_size]
        if len(idx) > 1 or len(y) == 1:
            yield x[idx], y[idx]


class _Epoch:
    """A re-iterable view of one client's data, reshuffled every pass."""

    def __init__(self, x: Tensor, y: Tensor, batch_size: int, generator: torch.Generator) -> None:
        self.x, self.y, self.batch_size, self.generator = x, y, batch_size, generator

    def __iter__(self) -> Iterator[tuple[Tensor, Tensor]]:
        return batches(self.x, self.y, batch_size=self.batch_size, generator=self.generator)


def build_model(cell: Cell, data: CarvedData) -> SplitModel:
    """A freshly initialised split model for the cell (seed it first for reproducibility)."""
    victim = VICTIMS.get(cell.victim)()
    if victim.per_token:  # a sequence cut is (tokens, width): no need to build a large model twice
        victim.check_cut(cell.cut)
        cut_shape = (data.input_shape[0], *victim.cuts[cell.cut][1:])
    else:
        cut_shape = victim.build(cut=cell.cut, num_classes=data.num_classes, input_shape=data.input_shape).cut_shape
    defense = build_defense(
        cell.defense, cut_shape=cut_shape, seed=cell.seed, per_token=victim.per_token, input_shape=data.input_shape,
        **cell.defense_params(),
    )
    return SplitModel(
        victim=victim,
        cut=cell.cut,
        num_classes=data.num_classes,
        input_shape=data.input_shape,
        defense=defense,
        protocol=cell.protocol,
        heads=cell.heads,
        clients=cell.clients,
    )


def train_victim(
    cell: Cell,
    *,
    data: CarvedData,
    profile: Profile,
    cache_dir: Path | None = None,
    observers: Iterable[CotrainAttack] = (),
    active: ActiveAttack | None = None,
    epochs: int | None = None,
    client_lr: float | None = None,
) -> TrainedVictim:
    """Train the cell's victim under its defense and measure utility and bytes on the wire.

    A cached victim (same ``cell.victim_key``, same code: :func:`checkpoint_path`) is loaded instead
    of retrained, unless observers must watch the training run; a checkpoint that does not load is
    deleted and the victim retrained. Observers do not change the run, so its victim is cached; a run
    with an active (malicious) server or a non-default length is neither read from nor written to
    the cache; a checkpoint that cannot be written (a full disk) is one warning line per folder.
    A watched run with a cache folder is snapshotted at every epoch's end and, stopped part way,
    resumes at its last snapshot with the same numbers (:mod:`bench.run.progress`).

    Args:
        epochs: training length (default: the profile's).
        client_lr: the client's learning rate (default: the profile's ``lr``, as every party's).
    """
    observers = list(observers)
    if active is not None or epochs is not None or client_lr is not None:
        cache_dir = None
    epochs = profile.epochs if epochs is None else epochs
    model, client_indices = _fresh_model(cell, data)
    cache_file = checkpoint_path(cell, model, cache_dir) if cache_dir else None
    if cache_file is not None and cache_file.exists() and not observers:
        metrics = load_checkpoint(cache_file, model)
        if metrics is not None:
            return TrainedVictim(model, metrics, client_indices, from_cache=True)
        model, client_indices = _fresh_model(cell, data)  # a failed load may have half-filled the model

    calibrate(model, data.members.x, batch_size=profile.eval_batch_size)
    trainer = SplitTrainer(
        model=model, lr=profile.lr, client_lr=client_lr, lambda_wcc=cell.lambda_wcc, observers=observers, active=active
    )
    generator = torch.Generator().manual_seed(cell.seed)
    loaders = [
        _Epoch(data.members.x[idx], data.members.y[idx], profile.batch_size, generator) for idx in client_indices
    ]
    snapshot = progress_path(cell, model, observers, cache_dir) if cache_dir and observers else None
    resumed = load_progress(snapshot, cell=cell, trainer=trainer, generator=generator) if snapshot else None
    loss, earlier = (resumed.loss, resumed.seconds) if resumed else (float("nan"), 0.0)
    snapshotting, started = snapshot is not None, time.perf_counter()
    while trainer.epoch < epochs:
        loss = trainer.train_epoch(loaders)
        if snapshotting and trainer.epoch < epochs:  # one failed write stops the snapshots of this run
            snapshotting = save_progress(snapshot, cell=cell, trainer=trainer, generator=generator, loss=loss,
                                         seconds=earlier + time.perf_counter() - started)
    train_seconds = earlier + time.perf_counter() - started

    channel = trainer.channel
    metrics = {
        "accuracy": accuracy(model, data.test.x, data.test.y, batch_size=profile.eval_batch_size),
        "final_train_loss": loss,
        **channel.wire_metrics(),
        "bytes_up_per_epoch": channel.bytes[("cut", UP)] / epochs,
        "bytes_down_per_epoch": channel.bytes[("cut", DOWN)] / epochs,
        "train_seconds": train_seconds,
        **{k: float(v) for k, v in model.defense.describe().items()},
        **model.defense.accounting(epochs=epochs),
        **attack_free_measures(model, data, client_indices),
    }
    if cache_file is not None:
        try:
            save_checkpoint(cache_file, model=model, metrics=metrics, cell=cell)
        # The checkpoint is only a cache: the cell goes on. torch.save's writer reports a failed write
        # (a full disk) as a RuntimeError.
        except (OSError, RuntimeError) as err:
            if cache_dir not in _UNCACHED:  # once per folder: a full disk fails every checkpoint
                _UNCACHED.add(cache_dir)
                reason = getattr(err, "strerror", None) or (str(err).strip().splitlines() or [type(err).__name__])[0]
                warn(f"checkpoint {cache_file} could not be written ({reason}); victims are not cached in "
                     f"{cache_dir} by this run (they train again next time)")
    if snapshot is not None:
        drop_progress(cache_dir, cell)
    return TrainedVictim(model, metrics, client_indices, resumed=resumed)


CALIBRATION_SAMPLES = 2048  # members whose payload norms fix the DP clip (a median: plenty)


@torch.no_grad()
def calibrate(model: SplitModel, x: Tensor, batch_size: int) -> None:
    """Let the defense fix its data-dependent constants (the DP clip) once, from the cut activations of
    the first ``CALIBRATION_SAMPLES`` members through the initial head of client 0; draws no random numbers."""
    was_training = model.training
    model.eval()
    head, x = model.head_of(0), x[:CALIBRATION_SAMPLES]
    z = torch.cat([head(x[i : i + batch_size]) for i in range(0, len(x), batch_size)])
    model.defense.calibrate(z)
    model.train(was_training)


def initial_model(cell: Cell, data: CarvedData, profile: Profile) -> tuple[SplitModel, list[Tensor]]:
    """The model and client partition :func:`train_victim` starts from, its defense calibrated; built
    without moving the global random state (torch, NumPy and Python's)."""
    py_state, np_state = random.getstate(), np.random.get_state()
    with forked_rng():
        model, client_indices = _fresh_model(cell, data)
        calibrate(model, data.members.x, batch_size=profile.eval_batch_size)
    random.setstate(py_state)
    np.random.set_state(np_state)
    return model, client_indices


def _fresh_model(cell: Cell, data: CarvedData) -> tuple[SplitModel, list[Tensor]]:
    seed_everything(cell.seed)
    model = build_model(cell, data).to(current_device())  # built there already; a stray host buffer moves too
    return model, partition(data.members.y, clients=cell.clients, scheme=cell.partition, alpha=cell.alpha, seed=cell.seed)
