"""Values as JSON holds them: NaN as null, numpy scalars as Python numbers, statistics as one object."""
from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

STAT_KEYS = ("mean", "ci95", "n", "n_runs", "n_diverged", "note")


def plain(value: object) -> object:
    """``value`` as JSON holds it: None for NaN and pandas' missing values, numpy scalars unwrapped,
    integral floats of integer-like fields left as floats (the caller decides)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def as_int(value: object) -> int | None:
    value = plain(value)
    return None if value is None else int(value)


def stat(row: Mapping | None) -> dict:
    """One statistic from a row of :func:`bench.report.aggregate.aggregate` (or the floor's):
    ``mean, ci95, n, n_runs, n_diverged, note``; every count 0 and the values null without a row."""
    if row is None:
        return {"mean": None, "ci95": None, "n": 0, "n_runs": 0, "n_diverged": 0, "note": None}
    note = plain(row.get("note"))
    return {"mean": plain(row.get("mean")), "ci95": plain(row.get("ci")), "n": as_int(row.get("n")) or 0,
            "n_runs": as_int(row.get("n_runs")) or 0, "n_diverged": as_int(row.get("n_diverged")) or 0,
            "note": str(note) if note is not None else None}
