"""The tidy table: one row per (cell, metric), every factor and every knob its own column."""
from __future__ import annotations

from typing import TYPE_CHECKING

from bench.registry import RegistryError
from bench.run.cell import Cell
from bench.run.record import ATTACK_FACTS, OK, CellRecord, attack_facts

if TYPE_CHECKING:  # pandas is imported where a table is built: a stored grid's rerun skips it
    import pandas as pd

ATTACK_KNOB_PREFIX = "attack_"
KINDS_SEPARATOR = ","  # the data kinds an attack reads, in one cell of the table: "image", "image,tabular"


def knob_columns(knobs: dict[str, dict[str, object]]) -> dict[str, object]:
    """Table columns of a record's resolved knobs: a defense knob under its name, an attack knob
    under ``attack_<name>`` (so a victim's own metrics can drop every attack setting)."""
    return {**knobs.get("defense", {}), **{f"{ATTACK_KNOB_PREFIX}{k}": v for k, v in knobs.get("attack", {}).items()}}


COLUMNS = Cell.factor_names() + [
    "cell_id", "victim_key", "raw_cell_id", *ATTACK_FACTS, "metric", "value", "note", "status", "error", "wall_seconds",
]
# Columns of the tidy table that are not factors of the experiment: ids, the attack's facts, the
# measurement and its status, and the provenance of the run (library versions, machine, device and
# numerics, code version, LPIPS weights).
NOT_FACTORS = frozenset(COLUMNS[len(Cell.factor_names()):]) | {
    "python", "machine", "cpu", "cpu_capability", "torch_threads", "code_version", "data_source", "lpips_weights", "lpips_weights_sha256",
    "device", "device_name", "tf32", "autocast", "deterministic",
}


def factor_columns(table: pd.DataFrame) -> list[str]:
    """The columns of ``table`` that describe the experiment: the cell's factors and every knob."""
    return [c for c in table.columns if c not in NOT_FACTORS and not c.startswith("version_")]


def _registered_facts(attack: object) -> dict[str, str | None]:
    """For records written before a fact was recorded: the registered attack's facts as table cells
    (threat model ``unknown`` and no kinds or headline for an attack this installation does not register)."""
    try:
        facts = attack_facts(attack)  # type: ignore[arg-type]
    except RegistryError:
        facts = {"threat_model": "unknown", "attack_kinds": None, "headline_metric": None}
    return _as_cells(facts)


def _as_cells(facts: dict) -> dict[str, str | None]:
    kinds = facts["attack_kinds"]
    return {**facts, "attack_kinds": KINDS_SEPARATOR.join(kinds) if kinds is not None else None}


def with_attack_facts(table: pd.DataFrame) -> pd.DataFrame:
    """A table collected before rows recorded some of the attack's facts (:data:`ATTACK_FACTS`), with
    each missing column filled from the registered attacks."""
    missing = [name for name in ATTACK_FACTS if name not in table]
    if not missing or "attack" not in table:
        return table
    known = {attack: _registered_facts(attack) for attack in set(table["attack"])}
    rows = [known[a] if a in known else _registered_facts(a) for a in table["attack"]]  # a NaN is not found by value
    return table.assign(**{name: [facts[name] for facts in rows] for name in missing})


def attacks_reading(table: pd.DataFrame, kind: str) -> frozenset[str]:
    """The attacks whose rows in ``table`` record that they read ``kind`` data (``image``, ``tabular``)."""
    recorded = table[["attack", "attack_kinds"]].dropna().drop_duplicates()
    return frozenset(a for a, kinds in zip(recorded["attack"], recorded["attack_kinds"]) if kind in kinds.split(KINDS_SEPARATOR))


def headline_metrics(table: pd.DataFrame) -> dict[str, str]:
    """The headline metric each attack's rows in ``table`` record (the victims' own cells have none)."""
    recorded = table.dropna(subset=["headline_metric"]).drop_duplicates("attack")
    return dict(zip(recorded["attack"], recorded["headline_metric"]))


def records_to_table(records: list[CellRecord]) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for rec in records:
        base = {
            **{name: getattr(rec.cell, name, None) for name in Cell.factor_names()},
            **knob_columns({"defense": rec.cell.defense_params(), "attack": rec.cell.attack_params()}),
            **knob_columns(rec.knobs),
            "cell_id": rec.cell.id, "victim_key": rec.cell.victim_key, "raw_cell_id": rec.cell.matched_raw().id,
            **_facts_of(rec),
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


def _facts_of(record: CellRecord) -> dict[str, str | None]:
    """The record's attack facts as table cells; those it predates, from the registry."""
    cells = _as_cells({name: getattr(record, name) for name in ATTACK_FACTS})
    if any(value is None for value in cells.values()):
        registered = _registered_facts(record.cell.attack)
        cells = {name: registered[name] if value is None else value for name, value in cells.items()}
    return cells


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
