"""What ``bench run --dry-run`` says: each cell, stored or to run, and how long the rest should take.

It only reads the results folder: no lock, no data, and a damaged record is left where it is. A
record kept under ``recovered/`` after a failed write counts as stored (the next run moves it into
``cells/`` before any cell runs). A cell to run whose watched run was stopped part way says so: the
run will take it up from its snapshot (:mod:`bench.run.progress`).
The estimate sums, over the cells to run, the median ``wall_seconds`` of the stored cells most like
each one: same dataset, victim, profile, attack and attack budget; else the same without the budget,
else the same attack, each scaled to the cell's budget (a cell at ×16 takes about 16 times its ×1
time: an overestimate, since the victim's training does not grow with the attack's budget); else
any stored cell.
"""
from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from bench.attack_knobs import BUDGET
from bench.run.cache_layout import CACHE_FOLDER, stopped_cells
from bench.run.cell import Cell
from bench.run.record import OK, CellRecord
from bench.run.store import ResultStore

STOPPED = "  (stopped part way: resumes from its snapshot unless the code changed)"


def dry_run_lines(cells: list[Cell], out: Path, *, jobs: int = 1) -> list[str]:
    """One line per cell (stored or to run, id, description), then the summary line."""
    store = ResultStore(out, move_damaged=False)
    stored = {cell.id for cell in cells if store.is_done(cell)}
    kept = {cell.id for cell in cells if cell.id not in stored and store.kept(cell) is not None}
    done = stored | kept
    status = lambda cell: "recovered" if cell.id in kept else "stored" if cell.id in done else "to run"  # noqa: E731
    stopped = stopped_cells(out / CACHE_FOLDER) - done
    lines = [f"{status(cell)}  {cell.id}  {describe(cell)}{STOPPED if cell.id in stopped else ''}" for cell in cells]
    todo = [cell for cell in cells if cell.id not in done]
    moved = f" ({len(kept)} kept in {store.recovery_dir}: the next run moves them into cells/)" if kept else ""
    summary = f"{len(cells)} cells, {len(done)} stored{moved}, {len(todo)} to run"
    if not todo:
        return [*lines, f"{summary}; nothing left to run"]
    seconds = estimate_seconds(todo, store.records())
    if seconds is None:
        return [*lines, f"{summary}; no stored timings to estimate the time left"]
    parallel = f" ({format_duration(seconds / jobs)} over {jobs} jobs at best)" if jobs > 1 else ""
    return [*lines, f"{summary}; about {format_duration(seconds)} of cell time left, from stored timings{parallel}"]


def estimate_seconds(todo: Iterable[Cell], records: Iterable[CellRecord]) -> float | None:
    """Sum of the median stored wall time of the cells most like each cell of ``todo``, scaled to its
    attack budget; None when no successful stored record has a wall time."""
    same_budget: dict[tuple, list[float]] = defaultdict(list)
    per_budget_same_setting: dict[tuple, list[float]] = defaultdict(list)
    per_budget_same_attack: dict[str, list[float]] = defaultdict(list)
    every: list[float] = []
    for record in records:
        if record.status != OK or record.wall_seconds <= 0:
            continue
        cell, wall = record.cell, record.wall_seconds
        same_budget[(*_setting(cell), _budget(cell))].append(wall)
        per_budget_same_setting[_setting(cell)].append(wall / _budget(cell))
        per_budget_same_attack[cell.attack].append(wall / _budget(cell))
        every.append(wall)
    if not every:
        return None
    total = 0.0
    for cell in todo:
        if like := same_budget.get((*_setting(cell), _budget(cell))):
            total += statistics.median(like)
        elif like := per_budget_same_setting.get(_setting(cell)) or per_budget_same_attack.get(cell.attack):
            total += statistics.median(like) * _budget(cell)
        else:
            total += statistics.median(every)
    return total


def _setting(cell: Cell) -> tuple[str, str, str, str]:
    return cell.dataset, cell.victim, cell.profile, cell.attack


def _budget(cell: Cell) -> float:
    return float(cell.knob(BUDGET.name, BUDGET.default)) if cell.attack != "none" else BUDGET.default


def describe(cell: Cell) -> str:
    """A short human-readable name: every factor, those at their usual value left out."""
    knobs = [f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in cell.defense_knobs + cell.attack_knobs]
    parts = [cell.dataset, f"{cell.victim}/{cell.cut}", cell.profile, cell.defense, *knobs]
    if cell.lambda_wcc:
        parts.append(f"lambda_wcc={cell.lambda_wcc:g}")
    if cell.attack != "none":
        parts.append(cell.attack)
    parts.append(f"seed={cell.seed}")
    if cell.protocol != "ushaped":
        parts.append(cell.protocol)
    if cell.heads != "sch":
        parts.append(cell.heads)
    if cell.partition != "iid":
        parts.append(f"{cell.partition}(alpha={cell.alpha:g})" if cell.alpha is not None else cell.partition)
    if cell.clients != 1:
        parts.append(f"clients={cell.clients}")
    return " ".join(parts)


def format_duration(seconds: float) -> str:
    """``42s``, ``7m 05s``, ``3h 20m``, ``2d 4h``."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"
