"""The tidy table: one row per (cell, metric), every factor and every knob its own column."""
from __future__ import annotations

from typing import TYPE_CHECKING

from bench.run.cell import Cell
from bench.run.record import OK, CellRecord

if TYPE_CHECKING:  # pandas is imported where a table is built: a stored grid's rerun skips it
    import pandas as pd

ATTACK_KNOB_PREFIX = "attack_"


def knob_columns(knobs: dict[str, dict[str, object]]) -> dict[str, object]:
    """Table columns of a record's resolved knobs: a defense knob under its name, an attack knob
    under ``attack_<name>`` (so a victim's own metrics can drop every attack setting)."""
    return {**knobs.get("defense", {}), **{f"{ATTACK_KNOB_PREFIX}{k}": v for k, v in knobs.get("attack", {}).items()}}


COLUMNS = Cell.factor_names() + [
    "cell_id", "victim_key", "raw_cell_id", "threat_model", "metric", "value", "note", "status", "error", "wall_seconds",
]
# Columns of the tidy table that are not factors of the experiment: ids, the measurement and its
# status, and the provenance of the run (library versions, machine, code version, LPIPS weights).
NOT_FACTORS = frozenset(COLUMNS[len(Cell.factor_names()):]) | {
    "python", "machine", "cpu", "cpu_capability", "torch_threads", "code_version", "data_source", "lpips_weights", "lpips_weights_sha256",
}


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
    return with_tuning_knob_defaults(table[ordered + [c for c in table.columns if c not in ordered]])


def with_tuning_knob_defaults(table: pd.DataFrame) -> pd.DataFrame:
    """A table whose attack cells ran before a knob that tunes their attacker existed, with the knob
    at its default in those rows (so they join the cells run since, as one configuration).

    An attack records every knob it declares, so where some rows of an attack carry a value in
    ``attack_<knob>`` (:data:`bench.attack_knobs.ATTACKER_TUNING_KNOBS`) and others do not, the
    others predate the knob and ran at its default. Attacks that never recorded the knob keep it
    empty: they do not read it.
    """
    from bench.attack_knobs import ATTACKER_TUNING_KNOBS

    for knob in ATTACKER_TUNING_KNOBS:
        column = ATTACK_KNOB_PREFIX + knob.name
        if column not in table or "attack" not in table:
            continue
        missing = table[column].isna()
        predates = missing & table["attack"].isin(set(table.loc[~missing, "attack"]))
        if predates.any():
            table = table.copy()
            table.loc[predates, column] = knob.default
    return table
