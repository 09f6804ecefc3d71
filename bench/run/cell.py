"""The cell: one point of the grid, a frozen dataclass whose id is a hash of its canonical JSON.

A cell names its defense's and its attack's knobs (``defense_knobs``, ``attack_knobs``) only where
they enter its identity: a knob without a default always, any other knob only when its value is
not the default. So a knob added to a defense or an attack later (with a default) leaves every
stored cell's id valid, and ``--attack-budget 1`` is the same cell as no budget at all.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

# Keys every cell id has carried since the first stored results (then fixed fields of the cell):
# a cell whose defense does not read one hashes it as None. Other knobs enter the id only when set.
ID_KNOB_SLOTS = ("cr", "sigma", "tile", "width")

Knobs = tuple[tuple[str, Any], ...]


def _as_knobs(values: Mapping[str, Any] | Knobs) -> Knobs:
    items = values.items() if isinstance(values, Mapping) else values
    return tuple(sorted((str(k), v) for k, v in items if v is not None))


@dataclass(frozen=True)
class Cell:
    """Every factor of one experiment.

    ``defense_knobs`` and ``attack_knobs`` accept a mapping and are stored as sorted
    ``(name, value)`` pairs, so cells are hashable and compare by value.
    """

    dataset: str
    victim: str
    cut: str
    defense: str
    profile: str
    seed: int
    protocol: str = "ushaped"
    heads: str = "sch"
    partition: str = "iid"
    alpha: float | None = None
    clients: int = 1
    lambda_wcc: float = 0.0
    attack: str = "none"
    defense_knobs: Knobs = field(default=())
    attack_knobs: Knobs = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "defense_knobs", _as_knobs(self.defense_knobs))
        object.__setattr__(self, "attack_knobs", _as_knobs(self.attack_knobs))

    def defense_params(self) -> dict[str, Any]:
        """The defense's knobs this cell names (knobs at their default are absent)."""
        return dict(self.defense_knobs)

    def attack_params(self) -> dict[str, Any]:
        """The attack's knobs this cell names (knobs at their default are absent)."""
        return dict(self.attack_knobs)

    def knob(self, name: str, default: Any = None) -> Any:
        return {**self.defense_params(), **self.attack_params()}.get(name, default)

    def as_dict(self) -> dict:
        """The cell as stored in its record (knobs as mappings)."""
        values = asdict(self)
        values["defense_knobs"], values["attack_knobs"] = self.defense_params(), self.attack_params()
        return values

    @staticmethod
    def from_dict(values: Mapping[str, Any]) -> Cell:
        """A cell from :meth:`as_dict`, or from a record written before knobs existed (where
        ``cr``, ``sigma``, ``tile`` and ``width`` were fields of the cell).

        Raises:
            TypeError, KeyError: the mapping is not a cell.
        """
        values = dict(values)
        legacy = {name: values.pop(name) for name in ID_KNOB_SLOTS if name in values}
        values["defense_knobs"] = {**legacy, **dict(values.get("defense_knobs") or {})}
        return Cell(**values)

    def identity(self, *, with_attack: bool = True) -> dict:
        """What the id hashes: every factor, the four slots, the named knobs."""
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("defense_knobs", "attack_knobs")}
        knobs = self.defense_params()
        values.update({name: knobs.pop(name, None) for name in ID_KNOB_SLOTS})
        if knobs:
            values["defense_knobs"] = knobs
        if not with_attack:
            del values["attack"]
        elif self.attack_knobs:
            values["attack_knobs"] = self.attack_params()
        return values

    @property
    def id(self) -> str:
        return _digest(self.identity())

    @property
    def victim_key(self) -> str:
        """Hash of the victim part (no attack, no attack knobs): the cache key of the trained victim."""
        return _digest(self.identity(with_attack=False))

    def matched_raw(self) -> Cell:
        """The undefended cell this one is compared with: raw, no WCC, same everything else."""
        return replace(self, defense="raw", defense_knobs=(), lambda_wcc=0.0)

    def label(self) -> str:
        """A short human-readable name, for progress lines."""
        knobs = " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.defense_knobs + self.attack_knobs)
        return " ".join(p for p in (self.defense, knobs, self.attack, f"seed={self.seed}") if p)

    @staticmethod
    def factor_names() -> list[str]:
        """The cell's own factors, in table order (knob columns follow, see :mod:`bench.run.table`)."""
        names = [f.name for f in fields(Cell) if f.name not in ("defense_knobs", "attack_knobs", "lambda_wcc", "attack")]
        return names + list(ID_KNOB_SLOTS) + ["lambda_wcc", "attack"]


def _digest(values: dict) -> str:
    canonical = json.dumps(values, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]
