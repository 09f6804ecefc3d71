"""The cell record: everything stored about one cell, and the checksum of its own content."""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field

from bench.run.cell import Cell

OK, FAILED = "ok", "failed"
CHECKSUM = "checksum"
# A stored record's integrity: its checksum matches its content, does not, or it predates checksums.
INTACT, MISMATCH, NO_CHECKSUM = "intact", "mismatch", "no checksum"


class InvalidRecordError(ValueError):
    """Parsed JSON that is not a cell record."""


def content_checksum(data: dict) -> str:
    """sha256 of a record's canonical JSON (sorted keys, compact), its checksum field left out."""
    content = {k: v for k, v in data.items() if k != CHECKSUM}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def integrity_of(data: dict) -> str:
    """:data:`INTACT`, :data:`MISMATCH` or :data:`NO_CHECKSUM` for a record as read from its file."""
    if CHECKSUM not in data:
        return NO_CHECKSUM
    return INTACT if data[CHECKSUM] == content_checksum(data) else MISMATCH


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
    def from_json(data: dict) -> CellRecord:
        """The record stored as ``data``.

        Raises:
            InvalidRecordError: ``data`` is not a cell record (a key missing, a value of the wrong type).
        """
        if not isinstance(data, dict):
            raise InvalidRecordError(f"a JSON {type(data).__name__}, not an object")
        try:
            cell = Cell.from_dict(data["cell"])
        except KeyError as err:
            raise InvalidRecordError(f"no key {err}") from None
        except (TypeError, ValueError, AttributeError) as err:
            raise InvalidRecordError(f"no cell: {err}") from None
        record = CellRecord(
            cell=cell,
            status=data.get("status"),
            metrics=data.get("metrics", {}),
            notes=data.get("notes", {}),
            provenance=data.get("provenance", {}),
            wall_seconds=data.get("wall_seconds", 0.0),
            error=data.get("error"),
            knobs=data["knobs"] if "knobs" in data else _knobs_before_knobs_existed(cell),
            threat_model=data.get("threat_model"),
        )
        _check_types(record)
        return record


def _check_types(record: CellRecord) -> None:
    number = (int, float)
    checks = {
        "status": record.status in (OK, FAILED),
        "metrics": isinstance(record.metrics, dict)
        and all(v is None or (isinstance(v, number) and not isinstance(v, bool)) for v in record.metrics.values()),
        "notes": isinstance(record.notes, dict),
        "provenance": isinstance(record.provenance, dict),
        "wall_seconds": isinstance(record.wall_seconds, number),
        "error": record.error is None or isinstance(record.error, str),
        "knobs": isinstance(record.knobs, dict) and all(isinstance(v, dict) for v in record.knobs.values()),
        "threat_model": record.threat_model is None or isinstance(record.threat_model, str),
    }
    wrong = [name for name, ok in checks.items() if not ok]
    if wrong:
        raise InvalidRecordError(f"wrong {', '.join(wrong)}")


def _knobs_before_knobs_existed(cell: Cell) -> dict[str, dict[str, object]]:
    """Records written before knobs existed ran every attack at its profile's budget (budget 1)."""
    return {"defense": cell.defense_params(), "attack": {"budget": 1.0} if cell.attack != "none" else {}}
