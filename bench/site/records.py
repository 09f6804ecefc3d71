"""The stored record behind each cell: its results folder, its file and the sha256 of that file's bytes."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from bench.run.record import CHECKSUM


class MissingRecordError(ValueError):
    """A cell in a results folder's table whose record file is not stored (one-line message)."""


@dataclass(frozen=True)
class RecordFile:
    """One record file as an entry names it.

    Attributes:
        cell_id: the cell's id (the file's stem).
        results: the results folder, as given to ``bench site``.
        path: the file relative to ``results`` (``cells/<cell_id>.json``).
        sha256: sha256 of the file's bytes.
        checksum: the record's own ``checksum`` field (sha256 of its canonical content), None before checksums.
        cell: the record's ``cell`` (its factors) as stored.
        knobs: the record's resolved ``knobs`` (``{"defense": {...}, "attack": {...}}``); empty in
            records written before they were stored.
    """

    cell_id: str
    results: str
    path: str
    sha256: str
    checksum: str | None
    cell: dict = field(default_factory=dict, compare=False)
    knobs: dict = field(default_factory=dict, compare=False)


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, as hex."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def relative_record_path(cell_id: str) -> str:
    return f"cells/{cell_id}.json"


def read_record_file(*, results: str, cell_id: str) -> RecordFile:
    """The record of ``cell_id`` under ``results``, hashed.

    Raises:
        MissingRecordError: the file does not exist or is not a JSON object.
    """
    path = Path(results) / relative_record_path(cell_id)
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
    except FileNotFoundError:
        raise MissingRecordError(f"{results} lists cell {cell_id} but holds no record {path}") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise MissingRecordError(f"record {path} is not JSON") from None
    if not isinstance(data, dict):
        raise MissingRecordError(f"record {path} is not a JSON object")
    checksum = data.get(CHECKSUM)
    return RecordFile(cell_id=cell_id, results=Path(results).as_posix(), path=relative_record_path(cell_id),
                      sha256=hashlib.sha256(raw).hexdigest(), checksum=checksum if isinstance(checksum, str) else None,
                      cell=data.get("cell") if isinstance(data.get("cell"), dict) else {},
                      knobs=data.get("knobs") if isinstance(data.get("knobs"), dict) else {})


def record_files(cells: dict[str, str]) -> dict[str, RecordFile]:
    """``{cell_id: RecordFile}`` for ``{cell_id: results folder}``.

    Raises:
        MissingRecordError: a cell's record is missing or unreadable.
    """
    return {cell_id: read_record_file(results=results, cell_id=cell_id) for cell_id, results in sorted(cells.items())}
