"""The result store: one JSON record per cell, written atomically, collected into one tidy table.

Layout under the output folder::

    cells/<cell_id>.json    one record per cell (status, rows, provenance, traceback if failed,
                            checksum of its own content)
    cells/quarantine/       records that could not be read, moved aside (their cells run again)
    recovered/<cell_id>.json  records a run computed but could not write into cells/; the next run
                            moves them there (:meth:`ResultStore.recover`) instead of running them again
    results.parquet         every record's rows, one row per (cell, metric)
    results.csv             the same table as CSV
    .lock                   held by the one run writing to the folder
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from bench.run.cell import Cell
from bench.run.record import CHECKSUM, OK, CellRecord, InvalidRecordError, content_checksum, integrity_of
from bench.run.store_lock import StoreLock
from bench.run.table import records_to_table
from bench.run.warn import warn

TABLE_NAMES = ("results.parquet", "results.csv")  # the collected table, in the order a reader prefers them

if TYPE_CHECKING:  # pandas is imported where a table is built: a stored grid's rerun skips it
    import pandas as pd


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one, never a part."""
    _atomic_write(path, text, "w")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """:func:`atomic_write_text` for bytes."""
    _atomic_write(path, data, "wb")


def _atomic_write(path: Path, content: str | bytes, mode: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass
class StoredRecord:
    """A record as read from its file, with its :func:`integrity_of`."""

    path: Path
    record: CellRecord
    integrity: str


def _kept_record(path: Path) -> CellRecord:
    """The record kept at ``path`` under ``recovered/``, parsed (raises what reading and parsing raise)."""
    return CellRecord.from_json(json.loads(path.read_bytes()))


class ResultStore:
    """Per-cell records under ``root/cells`` and the collected table.

    A record file that cannot be read as a record (cut short, not JSON, not a record) is moved to
    ``cells/quarantine/`` with one warning line, and its cell counts as not stored. With
    ``move_damaged=False`` (a look that must change nothing, e.g. ``bench run --dry-run``) it stays
    where it is, with the warning once.
    """

    def __init__(self, root: Path, *, move_damaged: bool = True) -> None:
        self.root = Path(root)
        self.cells_dir = self.root / "cells"
        self.quarantine_dir = self.cells_dir / "quarantine"
        self.recovery_dir = self.root / "recovered"
        self.move_damaged = move_damaged
        self._warned: set[Path] = set()

    def path_of(self, cell: Cell) -> Path:
        return self.cells_dir / f"{cell.id}.json"

    def load(self, cell: Cell) -> CellRecord | None:
        stored = self._read(self.path_of(cell))
        return stored.record if stored else None

    def _read(self, path: Path) -> StoredRecord | None:
        """The record at ``path``; None if there is none or it was damaged (then moved aside)."""
        try:
            data = json.loads(path.read_bytes())
            return StoredRecord(path, CellRecord.from_json(data), integrity_of(data))
        except FileNotFoundError:
            return None
        except json.JSONDecodeError as err:
            self._quarantine(path, f"not valid JSON: {err}")
        except UnicodeDecodeError:
            self._quarantine(path, "not text")
        except (InvalidRecordError, RecursionError) as err:
            self._quarantine(path, f"not a cell record: {err}")
        return None

    def _quarantine(self, path: Path, why: str) -> None:
        if not self.move_damaged:
            if path not in self._warned:
                self._warned.add(path)
                warn(f"cell record {path} is unreadable ({why}); its cell counts as not stored")
            return
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        target = self.quarantine_dir / f"{path.stem}.{stamp}.json"
        try:
            self.quarantine_dir.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
        except FileNotFoundError:  # another reader moved it first
            return
        except OSError as err:
            warn(f"cell record {path} is unreadable ({why}) and could not be moved aside ({err}); its cell counts as not stored")
            return
        warn(f"cell record {path} is unreadable ({why}); moved to {target}, its cell counts as not stored")

    def is_done(self, cell: Cell) -> bool:
        """A cell counts as done only with a successful record; failed cells are retried."""
        record = self.load(cell)
        return record is not None and record.status == OK

    def kept(self, cell: Cell) -> CellRecord | None:
        """The successful record of ``cell`` kept under ``recovered/`` (which the next run moves into
        ``cells/``: :meth:`recover`), read without moving anything; None if there is none or it does not read."""
        try:
            record = _kept_record(self.recovery_dir / f"{cell.id}.json")
        except (OSError, ValueError, InvalidRecordError, RecursionError):
            return None
        return record if record.status == OK else None

    def write(self, record: CellRecord) -> None:
        """Store ``record`` with the checksum of its content.

        Raises:
            OSError: the record could not be written (nothing of it is left behind).
        """
        atomic_write_text(self.path_of(record.cell), _record_text(record))

    def check_writable(self) -> None:
        """Write and remove one byte in ``cells/``, so that a folder that cannot take a record (read-only,
        disk full) is found before any cell runs.

        Raises:
            OSError: ``cells/`` cannot be created or written.
        """
        self.cells_dir.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=self.cells_dir, prefix=".write-probe.", suffix=".tmp")
        try:
            os.write(fd, b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
            Path(probe).unlink(missing_ok=True)

    def keep_for_recovery(self, record: CellRecord) -> Path | None:
        """Write ``record`` under ``recovered/`` (where :meth:`write` failed); its path, or None when
        that fails too (the cell then runs again next time)."""
        path = self.recovery_dir / f"{record.cell.id}.json"
        try:
            atomic_write_text(path, _record_text(record))
        except OSError:
            return None
        return path

    def recover(self) -> int:
        """Move every record kept under ``recovered/`` into ``cells/`` (one warning line); the number moved.
        A kept record that is not a record is left where it is, with one warning line.

        Raises:
            OSError: a record could not be moved into ``cells/``.
        """
        kept = sorted(self.recovery_dir.glob("*.json")) if self.recovery_dir.is_dir() else []
        moved = 0
        for path in kept:
            try:
                _kept_record(path)
            except (ValueError, InvalidRecordError, RecursionError) as err:
                warn(f"kept record {path} is unreadable ({err}); left where it is, its cell counts as not stored")
                continue
            self.cells_dir.mkdir(parents=True, exist_ok=True)
            os.replace(path, self.cells_dir / path.name)
            moved += 1
        if moved:
            warn(f"{moved} cell record{'s' if moved != 1 else ''} kept in {self.recovery_dir} after a failed write "
                 f"{'are' if moved != 1 else 'is'} now stored in {self.cells_dir}")
        return moved

    def checked_records(self) -> list[StoredRecord]:
        """Every readable record with its integrity (damaged files are moved aside and left out)."""
        if not self.cells_dir.exists():
            return []
        return [s for s in map(self._read, sorted(self.cells_dir.glob("*.json"))) if s is not None]

    def records(self) -> list[CellRecord]:
        return [s.record for s in self.checked_records()]

    def lock(self) -> StoreLock:
        """The folder's run lock (a context manager; see :class:`StoreLock`)."""
        return StoreLock(self.root)

    def table(self) -> pd.DataFrame:
        """The tidy table: one row per (cell, metric); a failed cell is one row with its error."""
        return records_to_table(self.records())

    def table_is_current(self) -> bool:
        """Whether ``results.parquet`` and ``results.csv`` both exist and are newer than every cell record
        and than the last change to the set of records (what ``bench run`` keeps)."""
        tables = [self.root / name for name in TABLE_NAMES]
        return all(t.exists() for t in tables) and min(t.stat().st_mtime_ns for t in tables) > self._records_changed_ns()

    def current_table(self) -> Path | None:
        """The stored table a reader may use in place of the records: ``results.parquet``, else
        ``results.csv`` (a clone holds only the parquet: the csv is not committed), the first that
        exists, if it is newer than every record and the last change to their set; else None."""
        table = self.stored_table()
        return table if table is not None and table.stat().st_mtime_ns > self._records_changed_ns() else None

    def stored_table(self) -> Path | None:
        """``results.parquet``, else ``results.csv``, the first that exists, current or not; else None."""
        return next((self.root / name for name in TABLE_NAMES if (self.root / name).exists()), None)

    def _records_changed_ns(self) -> int:
        """When a record was last written, added or removed (a tie with a table counts as stale)."""
        if not self.cells_dir.exists():
            return 0
        # The folder's own mtime moves when a record is added or removed by hand.
        newest = max((p.stat().st_mtime_ns for p in self.cells_dir.glob("*.json")), default=0)
        return max(newest, self.cells_dir.stat().st_mtime_ns)

    def collect(self) -> pd.DataFrame:
        """Write ``results.parquet`` and ``results.csv`` (atomically) and return the table."""
        from bench.run.derived import add_derived_metrics

        table = add_derived_metrics(self.table())
        self.root.mkdir(parents=True, exist_ok=True)
        for name, writer in zip(TABLE_NAMES, (_to_parquet, _to_csv)):
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{name}.", suffix=".tmp")
            os.close(fd)
            try:
                writer(table, tmp)
                os.replace(tmp, self.root / name)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        return table


def _record_text(record: CellRecord) -> str:
    """A record's file content: its JSON with the checksum of its content."""
    data = json.loads(json.dumps(record.to_json()))  # the checksum covers the content as it reads back
    data[CHECKSUM] = content_checksum(data)
    return json.dumps(data, indent=1, sort_keys=True)


def _to_parquet(table: pd.DataFrame, path: str) -> None:
    table.to_parquet(path, index=False)


def _to_csv(table: pd.DataFrame, path: str) -> None:
    table.to_csv(path, index=False)
