"""Run cells: skip stored ones, record each outcome atomically, never stop the grid on a failure."""
from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field

from bench.errors import NOTHING_RAN, PARTIAL_WORK, storage_error
from bench.run.cell import Cell
from bench.run.cell_runner import RunContext
from bench.run.executors import SerialExecutor
from bench.run.record import OK, CellRecord
from bench.run.store import ResultStore


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
    record as it comes back; a failing cell is recorded with its traceback and the grid goes on.

    Raises:
        bench.errors.StorageError: a record, or the collected table, could not be written. The run
            stops at the first record that cannot be written; that record is kept under
            ``recovered/`` where it can be (the next run stores it), else its cell runs again next
            time. Every record stored before is intact.
    """
    summary = RunSummary()
    todo = []
    for cell in cells:
        if store.is_done(cell):
            summary.skipped += 1
            if on_cell_done:
                on_cell_done(cell, "skipped")
        else:
            todo.append(cell)
    with closing((executor or SerialExecutor()).run(todo, ctx)) as records:
        for record in records:
            _write(store, record, summary)
            summary.ran += 1
            if record.status != OK:
                summary.failed.append(record.cell.id)
            if on_cell_done:
                on_cell_done(record.cell, record.status)
    summary.left = len(todo) - summary.ran
    if not store.table_is_current():
        try:
            store.collect()
        except OSError as err:
            outcome = (f"{summary.ran} cells run now and every cell record is stored; only the collected table is "
                       "out of date" if summary.ran else "nothing ran and every cell record is stored; only the "
                       "collected table is out of date")
            raise storage_error(store.root / "results.parquet", err, outcome, folder=store.root,
                                exit_code=PARTIAL_WORK if summary.ran else NOTHING_RAN) from None
    return summary


def _write(store: ResultStore, record: CellRecord, summary: RunSummary) -> None:
    """Store ``record``; where that fails, keep it under ``recovered/`` and stop the run."""
    try:
        store.write(record)
    except OSError as err:
        kept = store.keep_for_recovery(record)
        fate = (f"the cell just computed is kept in {kept} and stored by the next run" if kept is not None
                else "the cell just computed could not be kept and runs again next time")
        outcome = f"{fate}; {summary.ran} other cells stored by this run, no stored cell was touched"
        raise storage_error(store.path_of(record.cell), err, outcome, exit_code=PARTIAL_WORK) from None
