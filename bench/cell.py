"""The cell: one point of the grid, a frozen dataclass whose id is a hash of its canonical JSON."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields

# Fields that do not change how the victim is trained: every cell that differs only in these
# shares one trained (cached) victim.
ATTACK_FIELDS = ("attack",)


@dataclass(frozen=True)
class Cell:
    """Every factor of one experiment.

    Defense knobs that a defense does not read are ``None`` (so ``raw`` has one cell whatever CRs
    the grid names).
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
    cr: float | None = None
    sigma: float | None = None
    tile: int | None = None
    width: int | None = None
    lambda_wcc: float = 0.0
    attack: str = "none"

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def id(self) -> str:
        return _digest(self.as_dict())

    @property
    def victim_key(self) -> str:
        """Hash of the victim part: the cache key of the trained victim."""
        return _digest({k: v for k, v in self.as_dict().items() if k not in ATTACK_FIELDS})

    def defense_params(self) -> dict:
        return {k: getattr(self, k) for k in ("cr", "sigma", "tile", "width") if getattr(self, k) is not None}

    def matched_raw(self) -> "Cell":
        """The undefended cell this one is compared with: raw, no WCC, same everything else."""
        values = self.as_dict()
        values.update(defense="raw", cr=None, sigma=None, tile=None, width=None, lambda_wcc=0.0)
        return Cell(**values)

    @staticmethod
    def field_names() -> list[str]:
        return [f.name for f in fields(Cell)]


def _digest(values: dict) -> str:
    canonical = json.dumps(values, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]
