"""Configurations a report has no number for because every stored cell of them failed or diverged.

Tables (:func:`bench.report.tables.build_table`) and ``bench verify`` name each such configuration
in a note, with the first line of each distinct reason: a failed cell's exception line (from its
stored traceback), a diverged cell's stored note. A configuration with at least one usable cell is
shown as usual (its failed or diverged seeds left out and counted).
"""
from __future__ import annotations

import math

import pandas as pd

from bench.report.aggregate import DIVERGED, DIVERGED_AT_STEP, config_fields, diverged_cells
from bench.report.labels import attack_label, factor_value
from bench.run.table import ATTACK_KNOB_PREFIX

ALWAYS_NAMED = ("dataset", "defense", "attack")  # named in every label; other factors where they vary


def reason_line(error: object) -> str:
    """The first line of a failed cell's reason: the line its traceback's exception starts on, or the
    first line of a text that is not a traceback."""
    if not isinstance(error, str) or not error.strip():
        return "no reason stored"
    lines = error.strip().splitlines()
    frames = [i for i, line in enumerate(lines) if line.startswith(" ")]  # a traceback's frames are indented
    if lines[0].startswith("Traceback") and frames and frames[-1] + 1 < len(lines):
        return lines[frames[-1] + 1].strip()
    return lines[0].strip()


def unusable_configurations(table: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration whose every stored cell failed or diverged.

    Args:
        table: the tidy table (any statuses).

    Returns:
        The :func:`bench.report.aggregate.config_fields` of each such configuration with ``failed`` and
        ``diverged`` (cell counts) and ``reasons`` (the distinct first lines, in cell order).
    """
    fields = config_fields(table)
    columns = [*fields, "failed", "diverged", "reasons"]
    if table.empty:
        return pd.DataFrame(columns=columns)
    dropped = diverged_cells(table)
    cells = table.drop_duplicates("cell_id").assign(
        _failed=lambda t: t["status"] != "ok", _diverged=lambda t: (t["status"] == "ok") & t["cell_id"].isin(dropped),
    )
    why = _diverged_reasons(table)
    rows = []
    for key, group in cells.groupby(fields, dropna=False, sort=True):
        if not (group["_failed"] | group["_diverged"]).all():
            continue
        reasons = [reason_line(c["error"]) if c["_failed"] else why.get(c["cell_id"], "diverged")
                   for c in group.to_dict("records")]
        rows.append({**dict(zip(fields, key if isinstance(key, tuple) else (key,))), "failed": int(group["_failed"].sum()),
                     "diverged": int(group["_diverged"].sum()), "reasons": list(dict.fromkeys(reasons))})
    return pd.DataFrame(rows, columns=columns)


def _diverged_reasons(table: pd.DataFrame) -> dict[str, str]:
    """Each diverged cell's stored note (of its ``diverged`` metric), with the step where it was stored."""
    rows = table[table["metric"].isin([DIVERGED, DIVERGED_AT_STEP])]
    notes = {cell: str(note).splitlines()[0] for cell, note in zip(rows["cell_id"], rows["note"])
             if isinstance(note, str) and note.strip()}
    steps = rows[rows["metric"] == DIVERGED_AT_STEP]
    for cell, step in zip(steps["cell_id"], steps["value"]):
        if cell not in notes and not math.isnan(step):
            notes[cell] = f"victim training diverged at step {step:g}"
    return notes


def failure_notes(table: pd.DataFrame) -> list[str]:
    """One line per configuration of ``table`` whose every stored cell failed or diverged: what it is,
    how many cells failed or diverged, and the first line of each reason."""
    unusable = unusable_configurations(table)
    if unusable.empty:
        return []
    fields = config_fields(table)
    # A factor is named where it tells rows apart; an attack's setting only where it takes two values
    # (set on attack cells and unset on the victims' is no difference worth naming).
    varying = {f for f in fields if table[f].nunique(dropna=f.startswith(ATTACK_KNOB_PREFIX)) > 1}
    lines = []
    for row in unusable.to_dict("records"):
        named = [f for f in fields if f in ALWAYS_NAMED or (f in varying and _is_set(row[f]))]
        label = ", ".join(f"{f} {_shown(f, row[f])}" for f in named)
        counts = " and ".join(f"{n} {what}" for what, n in (("failed", row["failed"]), ("diverged", row["diverged"])) if n)
        lines.append(f"No result for {label}: every stored cell failed or diverged ({counts}): {'; '.join(row['reasons'])}")
    return lines


def _shown(field: str, value: object) -> str:
    if field == "attack":
        return attack_label(str(value)) or "none" if _is_set(value) else "none"
    return factor_value(field, value) or "unset"


def _is_set(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))
