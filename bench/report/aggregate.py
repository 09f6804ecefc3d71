"""Every statistic the reports show, computed in one place from the tidy result table.

The tidy table (:func:`bench.run.table.records_to_table`) has one row per (cell, metric). Here:

- a *configuration* is every factor column of the table (:func:`bench.run.table.factor_columns`: the
  cell's fields and every knob) except ``seed``; its seeds are the runs;
- a run whose ``diverged`` metric is 1, or whose victim's training diverged (``diverged_at_step``
  stored), is left out of every metric of its cell and counted;
- the mean over runs comes with the half-width of its 95% confidence interval (Student t, n − 1
  degrees of freedom; NaN for a single run);
- Δ vs Raw is computed per seed on the matched pair (the cell and the cell named by its
  ``raw_cell_id``, which has the same seed), then aggregated like any other value, both as the
  absolute difference ``x − raw`` and as the relative change ``(x − raw) / |raw| · 100``.

All functions are pure: they return new frames and never change their input.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from bench.attack_knobs import ATTACKER_TUNING_KNOBS, MEASURED
from bench.leakage.names import MEASURES
from bench.report.budgets import AttackBudget, parts_at
from bench.run.table import ATTACK_KNOB_PREFIX, factor_columns

if TYPE_CHECKING:
    from pandas.api.typing import SeriesGroupBy

DIVERGED = "diverged"
DIVERGED_AT_STEP = "diverged_at_step"  # the step a victim's training went non-finite (bench.run.divergence)
# Metrics of the trained victim: the same in every passive attack cell on that victim.
# Provenance columns that name the kind of machine a cell ran on (a victim retrains exactly only on one
# kind): the processor and, for cells that recorded it, the device (a GPU's name, or "cpu").
MACHINE_COLUMNS = ("cpu", "cpu_capability", "device_name")
TRAINING_FINGERPRINT = ("accuracy", "final_train_loss")  # equal on two machine kinds: the same computation
VICTIM_METRICS = frozenset({
    "accuracy", "accuracy_delta_vs_raw", "bytes_up_per_sample", "bytes_down_per_sample",
    "bytes_up_per_epoch", "bytes_down_per_epoch", "tail_bytes_up_per_sample", "tail_bytes_down_per_sample",
    "payload_values", "payload_bytes", "realized_cr", "train_seconds", "final_train_loss",
    "best_val_perplexity", "perplexity_inflation", "final_val_perplexity", "bytes_up_per_token", "pretrained",
    DIVERGED_AT_STEP, *MEASURES,  # the attack-free measures (bench.leakage) are the trained victim's too
})
STAT_COLUMNS = (
    "mean", "ci", "n", "n_runs", "n_diverged", "note", "is_raw",
    "delta", "delta_ci", "rel", "rel_ci", "n_pairs",
)


def select_profile(table: pd.DataFrame, profile: str | None = None) -> pd.DataFrame:
    """The rows of one profile.

    Args:
        table: the tidy table.
        profile: the profile to keep; ``None`` accepts the table only if it holds a single profile.

    Returns:
        The rows of that profile (a copy).

    Raises:
        ValueError: the profile is absent, or ``profile`` is None and the table mixes profiles.
    """
    present = sorted(str(p) for p in table["profile"].dropna().unique()) if "profile" in table else []
    if profile is not None:
        if profile not in present:
            raise ValueError(f"profile '{profile}' is not in the results (present: {', '.join(present) or 'none'})")
        return table[table["profile"] == profile].copy()
    if len(present) > 1:
        raise ValueError(f"the results mix profiles {', '.join(present)}; choose one (reports never mix profiles)")
    return table.copy()


def config_fields(table: pd.DataFrame) -> list[str]:
    """The columns that make a configuration: every factor of a tidy (or aggregated) table but ``seed``."""
    return [c for c in factor_columns(table) if c != "seed" and c not in STAT_COLUMNS]


def at_default_settings(table: pd.DataFrame, *, budget: AttackBudget = 1.0) -> pd.DataFrame:
    """The rows of victims and of attacks run at the default of every knob that tunes the attacker
    (the budget: at ``budget``, default the knob's default, 1).

    An attack cell is kept when each of its ``attack_budget``, ``attack_precision`` and
    ``attack_lambda1_scale`` columns (:data:`bench.attack_knobs.ATTACKER_TUNING_KNOBS`) is unset or at
    the knob's default (budget 1, float32, SDAR's weight as profiled). Cells at other values study the
    attack (a convergence check at 4× the budget, a bfloat16 run, another SDAR weight); a table's
    attack column, a claim or a leaderboard column shows one attacker per configuration, so they are
    left out there (the worst case still reads them). At another ``budget`` (``bench report
    --attack-budget 4``: the tables at the budget an attack converged at) the cells at that budget are
    kept instead of those at 1; at :data:`~bench.attack_knobs.MEASURED`, each attack's cells at its
    measured budget on their setting (:mod:`bench.report.budgets`).
    """
    if budget == MEASURED and "attack" in table:
        rows = table.reset_index(drop=True)  # positions: an index need not be unique
        kept = [at_default_settings(part, budget=b).index for b, part in parts_at(rows, budget)]
        return table[rows["attack"].eq("none").to_numpy() | rows.index.isin(np.concatenate([[], *kept]))]
    if budget == MEASURED:
        budget = 1.0
    keep = (table["attack"] == "none") if "attack" in table else pd.Series(True, index=table.index)
    at_default = pd.Series(True, index=table.index)
    for knob in ATTACKER_TUNING_KNOBS:
        column = ATTACK_KNOB_PREFIX + knob.name
        wanted = budget if knob.name == "budget" else knob.default
        if column in table:
            values = table[column]
            same = values.astype(str) == wanted if knob.type is str else pd.to_numeric(values, errors="coerce") == wanted
            at_default &= (values.isna() & (wanted == knob.default)) | same
        elif wanted != knob.default:
            at_default &= False
    return table[keep | at_default]


def plain_key(values: Iterable[object]) -> tuple:
    """``values`` as a hashable configuration key, every missing value (None, NaN, pandas' NA) as None,
    since NaN never equals itself."""
    return tuple(None if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) else v for v in values)


def config_key(row: Mapping, fields: Iterable[str]) -> tuple:
    """The values of ``fields`` in ``row`` (a record or a table row) as a :func:`plain_key`."""
    return plain_key(row.get(f) for f in fields)


def victim_fields(table: pd.DataFrame) -> list[str]:
    """The configuration of the trained victim: every configuration field but the attack and its
    settings (the ``attack_<knob>`` columns)."""
    return [f for f in config_fields(table) if f != "attack" and not f.startswith(ATTACK_KNOB_PREFIX)]


def numeric_factors(table: pd.DataFrame, fields: Iterable[str]) -> pd.DataFrame:
    """A copy of ``table`` with each of ``fields`` whose set values are all numbers as floats (unset → NaN).

    Each distinct value is parsed once: a factor takes few values over many rows, and parsing every row
    of an object column was most of the time of building a site."""
    out = table.copy()
    for column in fields:
        if column not in out:
            continue
        codes, uniques = pd.factorize(out[column], use_na_sentinel=True)
        numbers = pd.to_numeric(pd.Series(uniques, dtype=object), errors="coerce").to_numpy(dtype=float)
        if not np.isnan(numbers).any():  # a numeric factor, maybe unset
            out[column] = np.append(numbers, np.nan)[codes]  # code -1 (unset) takes the appended NaN
    return out


def ok_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Rows of successful cells that carry a metric, with every numeric factor as floats (None → NaN)."""
    rows = numeric_factors(table[(table["status"] == "ok") & table["metric"].notna()], config_fields(table))
    if "note" not in rows:
        rows["note"] = None
    return rows


def victim_view(table: pd.DataFrame) -> pd.DataFrame:
    """The victims' own metrics (:data:`VICTIM_METRICS`), one cell per trained victim, attack ``none``.

    A victim's utility is stored in every cell trained on it (attack ``none`` and every attack). This
    keeps one cell per ``victim_key`` (the ``none`` cell if stored, else the first attack by name,
    active attacks last: their hijacked run is not the victim), renames it to the victim (``cell_id`` =
    ``victim_key``, ``attack`` = ``none``, no attack knobs) and points its ``raw_cell_id`` at the
    matched raw victim, found through
    any cell of the victim whose raw match is stored. An attack's divergence says nothing about the
    victim, so it is not carried over; the victim's own (``diverged_at_step``) is.

    Its values are the mean over the machine kinds (:data:`MACHINE_COLUMNS`) its cells were trained
    on, each kind's cells averaged first; the cells of active attacks count only where the victim has
    no other. One kind retrains a victim exactly, two kinds differ by up to a few points of accuracy,
    and each kind counts once: a table does not move when another cell of a known kind lands, nor
    does it follow whichever attack's name sorts first.

    Args:
        table: the tidy table (any statuses).

    Returns:
        A tidy table of victim metrics, ready for :func:`aggregate`.
    """
    rows = ok_rows(table)
    victim_of = dict(zip(rows["cell_id"], rows["victim_key"]))
    pairs = rows[["victim_key", "raw_cell_id"]].drop_duplicates()
    pairs = pairs.assign(raw_victim=pairs["raw_cell_id"].map(victim_of)).dropna(subset=["raw_victim"])
    raw_victim = dict(zip(pairs["victim_key"], pairs["raw_victim"]))
    rows = rows[rows["metric"].isin(VICTIM_METRICS)]
    cells = rows[["cell_id", "victim_key", "attack", "threat_model"]].drop_duplicates("cell_id")
    later = (cells["attack"] != "none").astype(int) + (cells["threat_model"] == "active").astype(int)
    cells = cells.assign(_later=later).sort_values(["victim_key", "_later", "attack", "cell_id"])
    chosen = set(cells.drop_duplicates("victim_key")["cell_id"])
    out = rows[rows["cell_id"].isin(chosen)].copy()
    means = _mean_over_machine_kinds(rows)
    out["value"] = [means.get(key, value) for key, value in zip(zip(out["victim_key"], out["metric"]), out["value"])]
    out["raw_cell_id"] = out["victim_key"].map(raw_victim)
    out["cell_id"] = out["victim_key"]
    out["attack"] = "none"
    out["threat_model"] = "none"
    out[[c for c in out.columns if c.startswith(ATTACK_KNOB_PREFIX)]] = np.nan
    return out


def _mean_over_machine_kinds(rows: pd.DataFrame) -> dict[tuple[str, str], float]:
    """Per (victim, metric): the mean over machine kinds of each kind's mean over its cells (NaNs
    skipped); the cells of active attacks only for a victim with no other. Kinds whose trainings of
    the victim ended identically (:data:`TRAINING_FINGERPRINT` equal to the last digit) ran the same
    computation, e.g. a machine that did not record its processor and one that did: they count once."""
    passive = rows[rows["threat_model"] != "active"]
    rows = pd.concat([passive, rows[~rows["victim_key"].isin(passive["victim_key"])]])
    if rows.empty:
        return {}
    kinds = [c for c in MACHINE_COLUMNS if c in rows]
    parts = [rows[k].astype(object).fillna("unrecorded").astype(str) for k in kinds]
    machine = parts[0].str.cat(parts[1:], sep="|") if parts else pd.Series("", index=rows.index)
    per_kind = rows.assign(_machine=machine).groupby(["victim_key", "_machine", "metric"])["value"].mean().unstack("metric")
    shown = [m for m in TRAINING_FINGERPRINT if m in per_kind]
    ended = per_kind[shown].apply(lambda column: column.map(repr)).agg("|".join, axis=1) if shown else pd.Series("", index=per_kind.index)
    unknown = per_kind[shown].isna().all(axis=1) if shown else pd.Series(True, index=per_kind.index)
    run = ended.where(~unknown, per_kind.index.get_level_values("_machine"))
    per_run = per_kind.groupby([per_kind.index.get_level_values("victim_key"), run.to_numpy()]).mean()
    return per_run.groupby(level=0).mean().stack().dropna().to_dict()


def t_halfwidth(values: Iterable[float], level: float = 0.95) -> float:
    """Half-width of the two-sided Student-t confidence interval of the mean.

    Args:
        values: finite observations (one per seed).
        level: confidence level.

    Returns:
        ``t_{(1+level)/2, n-1} · s / √n`` with the sample standard deviation ``s`` (ddof 1);
        NaN when fewer than two values.
    """
    x = np.asarray(list(values), dtype=float)
    if len(x) < 2:
        return math.nan
    return float(stats.t.ppf((1 + level) / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))


NOT_LEARNED_SE = 2.0
_CHANCE = ("accuracy", "chance_accuracy", "test_samples")


def not_learned_cells(table: pd.DataFrame) -> set[str]:
    """Ids of the successful cells whose victim did not learn: its test accuracy lies within
    :data:`NOT_LEARNED_SE` binomial standard errors of ``chance_accuracy`` (the majority class's
    share of the test labels). Such a victim's payload says nothing about its defense, so a privacy
    number measured on it would make the defense look private for the wrong reason: ``bench verify``
    leaves these runs out of every privacy claim (tables keep them, and their accuracy shows it).
    Cells stored before ``chance_accuracy`` was recorded are never flagged."""
    rows = table[(table["status"] == "ok") & table["metric"].isin(_CHANCE)]
    wide = rows.pivot_table(index="cell_id", columns="metric", values="value", aggfunc="first")
    if not set(_CHANCE) <= set(wide.columns):
        return set()
    wide = wide.dropna(subset=list(_CHANCE))
    chance = wide["chance_accuracy"]
    se = np.sqrt(chance * (1 - chance) / wide["test_samples"])
    return set(wide.index[wide["accuracy"] <= chance + NOT_LEARNED_SE * se])


def diverged_cells(table: pd.DataFrame) -> set[str]:
    """Ids of the successful cells whose ``diverged`` metric is 1 or that store the step their victim's
    training diverged at (``diverged_at_step``)."""
    ok = table["status"] == "ok"
    flagged = (table["metric"] == DIVERGED) & (table["value"] >= 0.5)
    trained = (table["metric"] == DIVERGED_AT_STEP) & table["value"].notna()
    return set(table.loc[ok & (flagged | trained), "cell_id"])


def paired_deltas(rows: pd.DataFrame) -> pd.DataFrame:
    """Add ``delta`` (x − raw) and ``rel`` ((x − raw)/|raw|·100) per row, against the matched raw run.

    The raw value is the same metric of the cell named by ``raw_cell_id`` (same seed), looked up
    among ``rows`` themselves: pass only the runs to keep, so a diverged raw run has no match. Rows
    whose value or raw match is absent or not finite get NaN; ``rel`` is also NaN for a raw value of 0.
    """
    finite = rows[np.isfinite(rows["value"])]
    raw = dict(zip(zip(finite["cell_id"], finite["metric"]), finite["value"]))
    matched = pd.Series([raw.get(k, math.nan) for k in zip(rows["raw_cell_id"], rows["metric"])], index=rows.index)
    out = rows.assign(raw_value=matched.astype(float))
    out["delta"] = (out["value"] - out["raw_value"]).where(np.isfinite(out["value"]))
    scale = out["raw_value"].abs().replace(0.0, math.nan)
    out["rel"] = out["delta"] / scale * 100.0
    return out


def aggregate(table: pd.DataFrame, *, metrics: Iterable[str] | None = None, level: float = 0.95) -> pd.DataFrame:
    """Mean ± CI over seeds per (configuration, metric), with diverged runs left out and Δ vs Raw.

    Args:
        table: a tidy table of one profile (failed cells are ignored).
        metrics: the metrics to keep (default: all).
        level: confidence level of the intervals.

    Returns:
        One row per (configuration, metric): the :func:`config_fields`, ``metric`` and
        ``mean, ci, n`` (finite values of the non-diverged runs), ``n_runs`` (stored runs),
        ``n_diverged``, ``note`` (the stored reason of a missing value, if any), ``is_raw`` (the
        configuration is its own raw match), ``delta, delta_ci`` (x − raw), ``rel, rel_ci``
        (relative change in %) and ``n_pairs`` (seeds with a matched raw value).

    Raises:
        ValueError: the table mixes profiles.
    """
    select_profile(table)
    rows = ok_rows(table)
    fields = config_fields(rows)
    dropped = diverged_cells(rows)
    if metrics is not None:
        rows = rows[rows["metric"].isin(list(metrics))]
    diverged = rows["cell_id"].isin(dropped)
    rows = rows.assign(
        _kept=rows["value"].where(~diverged & np.isfinite(rows["value"])), _self=rows["cell_id"] == rows["raw_cell_id"],
        _diverged_cell=rows["cell_id"].where(diverged),
        _note=rows["note"].where(~diverged & ~np.isfinite(rows["value"])),
    )
    paired = paired_deltas(rows[~diverged])
    rows = rows.assign(_delta=paired["delta"], _rel=paired["rel"])  # NaN on the diverged runs
    groups = rows.groupby(fields + ["metric"], dropna=False, sort=True)
    out = pd.concat([
        _mean_ci(groups["_kept"], level).rename(columns={"count": "n"}),
        _mean_ci(groups["_delta"], level).rename(columns={"mean": "delta", "ci": "delta_ci", "count": "n_pairs"}),
        _mean_ci(groups["_rel"], level).rename(columns={"mean": "rel", "ci": "rel_ci"}).drop(columns="count"),
        groups["cell_id"].nunique().rename("n_runs"), groups["_diverged_cell"].nunique().rename("n_diverged"),
        groups["_note"].first().rename("note"), groups["_self"].all().rename("is_raw"),
    ], axis=1).reset_index()
    out["note"] = out["note"].astype(object).where(out["note"].notna(), None)
    return out[fields + ["metric", *STAT_COLUMNS]]


def _mean_ci(values: SeriesGroupBy, level: float) -> pd.DataFrame:
    """Per group: mean, CI half-width (as :func:`t_halfwidth`) and count of the finite values."""
    frame = values.agg(["mean", "std", "count"])
    n = frame["count"]
    t = pd.Series(stats.t.ppf((1 + level) / 2, (n - 1).clip(lower=1)), index=frame.index)
    frame["ci"] = (t * frame["std"] / np.sqrt(n)).where(n >= 2)
    return frame[["mean", "ci", "count"]]


def pareto_mask(points: pd.DataFrame, maximize: Iterable[str] = (), minimize: Iterable[str] = ()) -> pd.Series:
    """Which points are Pareto-optimal (no other point is at least as good everywhere and better once).

    Args:
        points: one row per point; rows with a NaN objective are never optimal.
        maximize: columns where larger is better.
        minimize: columns where smaller is better.

    Returns:
        A boolean Series aligned with ``points``.
    """
    maximize, minimize = list(maximize), list(minimize)
    cols = maximize + minimize
    signs = np.array([1.0] * len(maximize) + [-1.0] * len(minimize))
    values = points[cols].to_numpy(dtype=float) * signs
    finite = np.isfinite(values).all(axis=1)
    optimal = []
    for i, v in enumerate(values):
        if not finite[i]:
            optimal.append(False)
            continue
        others = values[finite]
        dominated = ((others >= v).all(axis=1) & (others > v).any(axis=1)).any()
        optimal.append(not dominated)
    return pd.Series(optimal, index=points.index)
