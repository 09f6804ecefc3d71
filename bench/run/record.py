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


# What a record (and every row of its table) carries about the cell's attack, as its class declares it.
ATTACK_FACTS = ("threat_model", "attack_kinds", "headline_metric")


class InvalidRecordError(ValueError):
    """Parsed JSON that is not a cell record."""


def attack_facts(attack: str) -> dict[str, str | list[str] | None]:
    """The :data:`ATTACK_FACTS` of a registered attack: its threat model, the data kinds it reads and
    its headline metric (:class:`attacks.base.Attack`); for ``none`` (the victim's own cell) threat
    model ``none`` and no kinds or headline.

    Raises:
        bench.registry.RegistryError: ``attack`` is not registered.
    """
    if attack == "none":
        return {"threat_model": "none", "attack_kinds": None, "headline_metric": None}
    from attacks import ATTACKS  # deferred: reading stored records needs no torch

    cls = ATTACKS.get(attack)
    return {"threat_model": cls.threat_model.value, "attack_kinds": list(cls.kinds), "headline_metric": cls.headline_metric}


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
    """Everything stored about one cell.

    ``threat_model``, ``attack_kinds`` and ``headline_metric`` are the attack's facts as its class
    declared them when the cell ran (``none``: threat model ``none``, no kinds or headline), so a
    report reads them without the registry; records written before a fact was recorded leave it
    ``None`` (:func:`bench.run.table.with_attack_facts` fills it from the registry).
    """

    cell: Cell
    status: str
    metrics: dict[str, float | None] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    provenance: dict[str, str] = field(default_factory=dict)
    wall_seconds: float = 0.0
    error: str | None = None
    knobs: dict[str, dict[str, object]] = field(default_factory=dict)
    threat_model: str | None = None
    attack_kinds: list[str] | None = None
    headline_metric: str | None = None

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
            "attack_kinds": self.attack_kinds,
            "headline_metric": self.headline_metric,
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
            attack_kinds=data.get("attack_kinds"),
            headline_metric=data.get("headline_metric"),
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
        "attack_kinds": record.attack_kinds is None
        or (isinstance(record.attack_kinds, list) and all(isinstance(k, str) for k in record.attack_kinds)),
        "headline_metric": record.headline_metric is None or isinstance(record.headline_metric, str),
    }
    wrong = [name for name, ok in checks.items() if not ok]
    if wrong:
        raise InvalidRecordError(f"wrong {', '.join(wrong)}")


def _knobs_before_knobs_existed(cell: Cell) -> dict[str, dict[str, object]]:
    """Records written before knobs existed ran every attack at its profile's budget (budget 1)."""
    return {"defense": cell.defense_params(), "attack": {"budget": 1.0} if cell.attack != "none" else {}}
