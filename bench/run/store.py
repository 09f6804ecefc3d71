"""The result store: one JSON record per cell, written atomically, collected into one tidy table.

Layout under the output folder::

    cells/<cell_id>.json    one record per cell (status, rows, provenance, traceback if failed)
    results.parquet         every record's rows, one row per (cell, metric)
    results.csv             the same table as CSV
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bench.run.cell import Cell

if TYPE_CHECKING:  # pandas is imported where a table is built: a stored grid's rerun skips it
    import pandas as pd

OK, FAILED = "ok", "failed"
ATTACK_KNOB_PREFIX = "attack_"


@dataclass
class CellRecord:
    """Everything stored about one cell."""

    cell: Cell
    status: str
    metrics: dict[str, float | None] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    provenance: dict[str, str] = field(default_factory=dict)
    wall_seconds: float = 0.0
    error: str | None = None
    knobs: dict[str, dict[str, object]] = field(default_factory=dict)
    threat_model: str | None = None

    def to_json(self) -> dict:
        return {
            "cell_id": self.cell.id,
            "victim_key": self.cell.victim_key,
            "cell": self.cell.as_dict(),
            "status": self.status,
            "metrics": {k: (None if v is None or (isinstance(v, float) and math.isnan(v)) else v) for k, v in self.metrics.items()},
            "notes": self.notes,
            "provenance": self.provenance,
            "wall_seconds": self.wall_seconds,
            "error": self.error,
            "knobs": self.knobs,
            "threat_model": self.threat_model,
        }

    @staticmethod
    def from_json(data: dict) -> "CellRecord":
        cell = Cell.from_dict(data["cell"])
        return CellRecord(
            cell=cell,
            status=data["status"],
            metrics=data.get("metrics", {}),
            notes=data.get("notes", {}),
            provenance=data.get("provenance", {}),
            wall_seconds=data.get("wall_seconds", 0.0),
            error=data.get("error"),
            knobs=data["knobs"] if "knobs" in data else _knobs_before_knobs_existed(cell),
            threat_model=data.get("threat_model"),
        )


def _knobs_before_knobs_existed(cell: Cell) -> dict[str, dict[str, object]]:
    """Records written before knobs existed ran every attack at its profile's budget (budget 1)."""
    return {"defense": cell.defense_params(), "attack": {"budget": 1.0} if cell.attack != "none" else {}}


def knob_columns(knobs: dict[str, dict[str, object]]) -> dict[str, object]:
    """Table columns of a record's resolved knobs: a defense knob under its name, an attack knob
    under ``attack_<name>`` (so a victim's own metrics can drop every attack setting)."""
    return {**knobs.get("defense", {}), **{f"{ATTACK_KNOB_PREFIX}{k}": v for k, v in knobs.get("attack", {}).items()}}


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class ResultStore:
    """Per-cell records under ``root/cells`` and the collected table."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.cells_dir = self.root / "cells"

    def path_of(self, cell: Cell) -> Path:
        return self.cells_dir / f"{cell.id}.json"

    def load(self, cell: Cell) -> CellRecord | None:
        path = self.path_of(cell)
        if not path.exists():
            return None
        return CellRecord.from_json(json.loads(path.read_text()))

    def is_done(self, cell: Cell) -> bool:
        """A cell counts as done only with a successful record; failed cells are retried."""
        record = self.load(cell)
        return record is not None and record.status == OK

    def write(self, record: CellRecord) -> None:
        atomic_write_text(self.path_of(record.cell), json.dumps(record.to_json(), indent=1, sort_keys=True))

    def records(self) -> list[CellRecord]:
        if not self.cells_dir.exists():
            return []
        return [CellRecord.from_json(json.loads(p.read_text())) for p in sorted(self.cells_dir.glob("*.json"))]

    def table(self) -> pd.DataFrame:
        """The tidy table: one row per (cell, metric); a failed cell is one row with its error."""
        return records_to_table(self.records())

    def table_is_current(self) -> bool:
        """Whether ``results.parquet`` and ``results.csv`` exist and are newer than every cell record and
        than the last change to the set of records."""
        tables = [self.root / name for name in ("results.parquet", "results.csv")]
        if not all(t.exists() for t in tables):
            return False
        # The folder's own mtime moves when a record is added or removed by hand.
        newest = max((p.stat().st_mtime_ns for p in self.cells_dir.glob("*.json")), default=0)
        if self.cells_dir.exists():
            newest = max(newest, self.cells_dir.stat().st_mtime_ns)
        return min(t.stat().st_mtime_ns for t in tables) > newest  # a tie counts as stale

    def collect(self) -> pd.DataFrame:
        """Write ``results.parquet`` and ``results.csv`` (atomically) and return the table."""
        from bench.run.derived import add_derived_metrics

        table = add_derived_metrics(self.table())
        self.root.mkdir(parents=True, exist_ok=True)
        for name, writer in (("results.parquet", _to_parquet), ("results.csv", _to_csv)):
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{name}.", suffix=".tmp")
            os.close(fd)
            try:
                writer(table, tmp)
                os.replace(tmp, self.root / name)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        return table


def _to_parquet(table: pd.DataFrame, path: str) -> None:
    table.to_parquet(path, index=False)


def _to_csv(table: pd.DataFrame, path: str) -> None:
    table.to_csv(path, index=False)


COLUMNS = Cell.factor_names() + [
    "cell_id", "victim_key", "raw_cell_id", "threat_model", "metric", "value", "note", "status", "error", "wall_seconds",
]
# Columns of the tidy table that are not factors of the experiment: ids, the measurement and its
# status, and the provenance of the run (library versions, machine, code version).
NOT_FACTORS = frozenset(COLUMNS[len(Cell.factor_names()):]) | {"python", "machine", "torch_threads", "code_version"}


def factor_columns(table: pd.DataFrame) -> list[str]:
    """The columns of ``table`` that describe the experiment: the cell's factors and every knob."""
    return [c for c in table.columns if c not in NOT_FACTORS and not c.startswith("version_")]


def _threat_model_of(attack: str) -> str:
    """For records written before the threat model was recorded: the registered attack's."""
    if attack == "none":
        return "none"
    from attacks import ATTACKS

    return ATTACKS.get(attack).threat_model.value if attack in ATTACKS else "unknown"


def with_threat_models(table: pd.DataFrame) -> pd.DataFrame:
    """A table collected before rows recorded the attack's threat model, with the column added."""
    if "threat_model" in table or table.empty:
        return table
    return table.assign(threat_model=table["attack"].map(_threat_model_of))


def records_to_table(records: list[CellRecord]) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for rec in records:
        base = {
            **{name: getattr(rec.cell, name, None) for name in Cell.factor_names()},
            **knob_columns({"defense": rec.cell.defense_params(), "attack": rec.cell.attack_params()}),
            **knob_columns(rec.knobs),
            "cell_id": rec.cell.id, "victim_key": rec.cell.victim_key, "raw_cell_id": rec.cell.matched_raw().id,
            "threat_model": rec.threat_model or _threat_model_of(rec.cell.attack),
        }
        common = {"status": rec.status, "wall_seconds": rec.wall_seconds, **rec.provenance}
        if rec.status != OK:
            rows.append({**base, "metric": None, "value": float("nan"), "error": rec.error, **common})
            continue
        for metric, value in rec.metrics.items():
            rows.append({
                **base, "metric": metric, "value": float("nan") if value is None else float(value),
                "note": rec.notes.get(metric), **common,
            })
    table = pd.DataFrame(rows)
    if table.empty:
        return pd.DataFrame(columns=COLUMNS)
    for column in COLUMNS:
        if column not in table.columns:
            table[column] = None
    ordered = [c for c in COLUMNS if c in table.columns]
    return table[ordered + [c for c in table.columns if c not in ordered]]
