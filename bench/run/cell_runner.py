"""Run one cell in this process: load its data, train (or load) its victim, run its attack; any
exception becomes a failed record carrying its traceback."""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import torch

from bench.data import DATASETS
from bench.data.splits import CarvedData, carve
from bench.leakage.measures import attack_free_notes
from bench.metrics.lpips_weights import weights_provenance
from bench.profiles import Profile, get_profile
from bench.run.attack_cell import run_attack_cell
from bench.run.cell import Cell
from bench.run.device import Numerics, device_provenance, device_scope
from bench.run.divergence import TrainingDiverged, diverged_victim_metrics
from bench.run.grid import resolved_knobs
from bench.run.progress import RESUMED_SECONDS
from bench.run.provenance import environment
from bench.run.record import FAILED, OK, CellRecord, attack_facts
from bench.run.training import train_victim


@dataclass
class RunContext:
    """What every cell of one run shares: where data and cached victims live, which AlexNet weights
    LPIPS reads (``lpips_weights``; None: torchvision's cached copy, if any), and where and how cells
    compute (``device``, concrete: ``cpu`` or ``cuda:N``; ``numerics``; ``threads``: the torch threads
    each cell runs with, whichever process runs it, so that one cell id gives one set of numbers). With
    a ``deadline`` (a ``time.time()``) no cell starts that would not end before it
    (:func:`bench.run.executors.stream_group`)."""

    data_root: Path
    download: bool = False
    cache_dir: Path | None = None
    artifacts_dir: Path | None = None
    lpips_weights: Path | None = None
    device: str = "cpu"
    numerics: Numerics = field(default_factory=Numerics)
    deadline: float | None = None
    threads: int = 1
    _data: dict[tuple[str, str], CarvedData] = field(default_factory=dict)
    _sources: dict[str, str] = field(default_factory=dict)
    _placed: dict[tuple[str, str], CarvedData] = field(default_factory=dict)

    def data(self, dataset: str, profile_name: str) -> CarvedData:
        """The carved dataset, in host memory (loaded once per context)."""
        key = (dataset, profile_name)
        if key not in self._data:
            with torch.device("cpu"):  # loaders build host tensors, whatever scope a cell runs in
                raw = DATASETS.get(dataset)(self.data_root, download=self.download)
                if raw.kind == "text":
                    from bench.data.text_blocks import carve_text  # needs the optional tokenizers package

                    carved = carve_text(raw, get_profile(profile_name), self.data_root)
                else:
                    carved = carve(raw, get_profile(profile_name))
            self._sources[dataset] = "; ".join(part for part in (raw.source, carved.description) if part)
            self._data[key] = carved
        return self._data[key]

    def placed_data(self, dataset: str, profile_name: str) -> CarvedData:
        """The carved dataset held on the context's device (moved once per context).

        Raises:
            MemoryError: when it does not fit in half the device's free memory.
        """
        data = self.data(dataset, profile_name)
        if self.device == "cpu":
            return data
        key = (dataset, profile_name)
        if key not in self._placed:
            free, _ = torch.cuda.mem_get_info(torch.device(self.device))
            if data.nbytes() > free // 2:
                raise MemoryError(f"{dataset} ({data.nbytes() / 2**30:.1f} GiB carved) does not fit in half of {self.device}'s "
                                  f"free memory ({free / 2**30:.1f} GiB); run it with --device cpu")
            self._placed[key] = data.to(self.device)
        return self._placed[key]

    def source(self, dataset: str) -> str:
        """The loaded copy's ``RawDataset.source``; empty when the dataset was never loaded."""
        return self._sources.get(dataset, "")


def chance_metrics(labels: torch.Tensor) -> dict[str, float]:
    """``chance_accuracy`` (the majority class's share of the test labels: what a victim that learned
    nothing scores) and ``test_samples``, so that reports can tell a victim that did not learn."""
    counts = torch.bincount(labels)
    return {"chance_accuracy": float(counts.max()) / len(labels), "test_samples": float(len(labels))}


def run_cell(cell: Cell, ctx: RunContext) -> tuple[dict[str, float | None], dict[str, str]]:
    """Train (or load) the cell's victim, run its attack if any; return metrics and per-metric notes."""
    profile = get_profile(cell.profile)
    data = ctx.placed_data(cell.dataset, cell.profile)
    if data.kind == "text":
        from bench.run.lm_training import train_language_model

        if cell.attack != "none":
            raise ValueError(f"attack '{cell.attack}' does not run on text; language-model cells are utility cells")
        return train_language_model(cell, data=data, profile=profile)
    metrics, notes = _run(cell, ctx, data, profile)
    return {**metrics, **chance_metrics(data.test.y)}, notes


def _run(cell: Cell, ctx: RunContext, data: CarvedData, profile: Profile) -> tuple[dict[str, float | None], dict[str, str]]:
    if cell.attack != "none":
        return run_attack_cell(
            cell, data=data, profile=profile, cache_dir=ctx.cache_dir, artifacts_dir=ctx.artifacts_dir,
            lpips_weights=ctx.lpips_weights,
        )
    trained = train_victim(cell, data=data, profile=profile, cache_dir=ctx.cache_dir)
    return dict(trained.metrics), attack_free_notes(trained.model.defense, trained.metrics)


def execute_cell(cell: Cell, ctx: RunContext) -> CellRecord:
    """Run one cell on the context's device under its numerics, with ``ctx.threads`` torch threads; any
    exception becomes a failed record carrying its traceback, a victim whose training diverged a record
    saying so (:func:`bench.run.divergence.diverged_victim_metrics`). The record names every knob the
    cell's parts read (defaults included), the attack's facts (threat model, data kinds, headline
    metric) and where and how it computed (its torch threads among them). A cell resumed from a
    snapshot counts the seconds its stopped runs spent in ``wall_seconds``."""
    started = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(ctx.threads)
    earlier = 0.0  # the seconds a resumed cell's stopped runs spent
    try:
        with device_scope(ctx.device, ctx.numerics):
            metrics, notes = run_cell(cell, ctx)
        record = CellRecord(cell, OK, metrics, notes)
        earlier = metrics.get(RESUMED_SECONDS) or 0.0
    except TrainingDiverged as diverged:
        record = CellRecord(cell, OK, *diverged_victim_metrics(cell, diverged))
    except Exception:  # recorded, not swallowed: the traceback goes into the store
        record = CellRecord(cell, FAILED, error=traceback.format_exc())
    finally:
        torch.set_num_threads(threads)
    record.wall_seconds = time.perf_counter() - started + earlier
    record.provenance = {
        **environment(), **device_provenance(ctx.device), **ctx.numerics.columns(), **weights_provenance(ctx.lpips_weights),
        "data_source": ctx.source(cell.dataset), "torch_threads": str(ctx.threads),
    }
    try:
        record.knobs = resolved_knobs(cell)
        facts = attack_facts(cell.attack)
        record.threat_model, record.attack_kinds = facts["threat_model"], facts["attack_kinds"]
        record.headline_metric = facts["headline_metric"]
    except Exception:  # an unregistered part: the cell itself failed on it and says why
        record.knobs = {"defense": cell.defense_params(), "attack": cell.attack_params()}
    return record
