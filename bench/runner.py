"""Run cells: skip stored ones, record each outcome atomically, never stop the grid on a failure."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bench.cell import Cell
from bench.attack_cell import run_attack_cell
from bench.data import DATASETS
from bench.data.splits import CarvedData, carve
from bench.profiles import get_profile
from bench.store import OK, ResultStore
from bench.train import train_victim


@dataclass
class RunContext:
    """What every cell of one run shares: where data and cached victims live."""

    data_root: Path
    download: bool = False
    cache_dir: Path | None = None
    artifacts_dir: Path | None = None
    _data: dict[tuple[str, str], CarvedData] = field(default_factory=dict)

    def data(self, dataset: str, profile_name: str) -> CarvedData:
        key = (dataset, profile_name)
        if key not in self._data:
            raw = DATASETS.get(dataset)(self.data_root, download=self.download)
            self._data[key] = carve(raw, get_profile(profile_name))
        return self._data[key]


def run_cell(cell: Cell, ctx: RunContext) -> tuple[dict[str, float | None], dict[str, str]]:
    """Train (or load) the cell's victim, run its attack if any; return metrics and per-metric notes."""
    profile = get_profile(cell.profile)
    data = ctx.data(cell.dataset, cell.profile)
    if cell.attack != "none":
        return run_attack_cell(
            cell, data=data, profile=profile, cache_dir=ctx.cache_dir, artifacts_dir=ctx.artifacts_dir
        )
    trained = train_victim(cell, data=data, profile=profile, cache_dir=ctx.cache_dir)
    return dict(trained.metrics), {}


@dataclass
class RunSummary:
    ran: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)


def run_grid(
    cells: list[Cell],
    *,
    store: ResultStore,
    ctx: RunContext,
    executor=None,
    on_cell_done: Callable[[Cell, str], None] | None = None,
) -> RunSummary:
    """Run every cell not already stored (on ``executor``, default: in this process) and write each
    record as it comes back; a failing cell is recorded with its traceback and the grid goes on."""
    from bench.executors import SerialExecutor

    summary = RunSummary()
    todo = []
    for cell in cells:
        if store.is_done(cell):
            summary.skipped += 1
            if on_cell_done:
                on_cell_done(cell, "skipped")
        else:
            todo.append(cell)
    for record in (executor or SerialExecutor()).run(todo, ctx):
        store.write(record)
        summary.ran += 1
        if record.status != OK:
            summary.failed.append(record.cell.id)
        if on_cell_done:
            on_cell_done(record.cell, record.status)
    if not store.table_is_current():
        store.collect()
    return summary
