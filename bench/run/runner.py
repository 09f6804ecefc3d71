"""Run cells: skip stored ones, record each outcome atomically, never stop the grid on a failure."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bench.run.cell import Cell
from bench.run.cell_runner import RunContext
from bench.run.executors import SerialExecutor
from bench.run.store import OK, ResultStore


@dataclass
class RunSummary:
    """Cells run, already stored, failed, and left to run (not started before the run's deadline)."""

    ran: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)
    left: int = 0


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
    summary.left = len(todo) - summary.ran
    if not store.table_is_current():
        store.collect()
    return summary
