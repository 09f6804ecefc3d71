"""The floor: what the ``prior`` attack scores (the mean auxiliary image; it never reads the payload).

An attack measures leakage only as far as it beats the floor. Rules, used by the tables' floor rows
and by the claims (:mod:`bench.report.claims`):

- **Matching.** The prior does not depend on the defense, so the floor of a (dataset, victim, cut)
  pools the prior's cells of every defense it ran under: per seed the mean over those cells
  (diverged cells and non-finite values left out), then mean ± 95% CI (Student t) over seeds.
- **Metric** (:func:`floor_metric`). A column of metric ``m`` is compared with the prior's ``m``,
  except a min-max scored metric (``masked_mse_minmax``, UnSplit's released scoring), which is
  compared with the prior's as-returned metric (``masked_mse``): min-max normalising the mean image
  stretches its contrast to [0, 1] and makes it another image, not the data-independent guess the
  floor stands for; the as-returned mean image is that guess. The ``_black`` and ``_grey`` metrics
  of the prior's cells (an all-black and a constant-0.5 image scored in place of each
  reconstruction) are not floors but trivial baselines, quoted in the tables' notes for the
  foreground-masked metrics (:func:`baseline_notes`), where a dark image is rewarded on black
  backgrounds.
- **A run past the floor** (:func:`runs_past_floor`). One seed's run of an attack that scores at or
  past the prior's value on the same seed measured nothing on that seed: averaged with seeds where it
  worked, it would hide a failed attack, so the tables name such runs beside the mean.
- **Noise** (:func:`leakage_gap`). An attack's mean ``a`` over seeds (sample standard deviation
  ``s_a``, ``n_a`` seeds) against the floor's ``p`` (``s_p``, ``n_p``): the gap is
  ``d · (p − a)`` with the metric's privacy direction ``d`` (positive: the attack does better than
  the floor), the noise is ``2 · SE`` with the standard error of the difference
  ``SE = √(s_a²/n_a + s_p²/n_p)`` (a side with a single value adds 0). The attack has measured no
  leakage when ``gap ≤ 2 · SE``: within noise of the floor, or worse than it.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from bench.report.aggregate import diverged_cells, t_halfwidth
from bench.report.labels import DATASET_LABELS, METRIC_LABELS, number, privacy_direction, split_scoring

PRIOR = "prior"
FLOOR_LABEL = "floor (prior)"
FLOOR_KEYS = ("dataset", "victim", "cut")
BASELINES = (("_black", "an all-black image"), ("_grey", "a constant-0.5 image"))
MASKED_PREFIXES = ("masked_", "box_")
FLOOR_COLUMNS = [*FLOOR_KEYS, "metric", "mean", "ci", "std", "n", "n_runs", "n_diverged", "note"]


def floor_metric(metric: str) -> str:
    """The prior's metric that is the floor of ``metric``: itself, or the unsuffixed metric of a
    min-max scored one (see the module's rules)."""
    base, suffix = split_scoring(metric)
    return base if suffix == "_minmax" else metric


def prior_seed_values(table: pd.DataFrame) -> pd.DataFrame:
    """The prior's value per (dataset, victim, cut, metric, seed): the mean over that seed's cells
    (one per defense it ran under), diverged cells and non-finite values left out (NaN if none).

    Args:
        table: a tidy table (any attacks, statuses; one profile).

    Returns:
        Columns ``dataset, victim, cut, metric, seed, value, note, n_cells`` (cells stored) and
        ``diverged`` (every cell of that seed diverged).
    """
    columns = [*FLOOR_KEYS, "metric", "seed", "value", "note", "n_cells", "diverged"]
    rows = table[(table["attack"] == PRIOR) & (table["status"] == "ok") & table["metric"].notna()]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    dropped = rows["cell_id"].isin(diverged_cells(rows))
    kept = rows["value"].where(~dropped & np.isfinite(rows["value"].astype(float)))
    note = rows["note"] if "note" in rows else pd.Series(None, index=rows.index, dtype=object)
    rows = rows.assign(value=kept, _dropped=dropped, note=note.where(~dropped & kept.isna()))
    groups = rows.groupby([*FLOOR_KEYS, "metric", "seed"], dropna=False)
    out = pd.concat([groups["value"].mean(), groups["note"].first(), groups["cell_id"].nunique().rename("n_cells"),
                     groups["_dropped"].all().rename("diverged")], axis=1).reset_index()
    return out[columns]


def prior_floor(table: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """The floor per (dataset, victim, cut, metric): ``mean``, ``ci`` (as :func:`t_halfwidth`),
    ``std`` (ddof 1), ``n`` (seeds with a finite value), ``n_runs`` (seeds stored), ``n_diverged``
    (seeds whose every cell diverged) and ``note`` (the stored reason of a missing value)."""
    seeds = prior_seed_values(table)
    out = []
    for key, group in seeds.groupby([*FLOOR_KEYS, "metric"], dropna=False, sort=True):
        values = group["value"].dropna().to_numpy(dtype=float)
        notes = group["note"].dropna()
        out.append({**dict(zip([*FLOOR_KEYS, "metric"], key)), "mean": float(values.mean()) if len(values) else math.nan,
                    "ci": t_halfwidth(values, level), "std": float(values.std(ddof=1)) if len(values) > 1 else math.nan,
                    "n": len(values), "n_runs": group["seed"].nunique(), "n_diverged": int(group["diverged"].sum()),
                    "note": notes.iloc[0] if len(notes) else None})
    return pd.DataFrame(out, columns=FLOOR_COLUMNS)


def runs_past_floor(rows: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The runs of ``rows`` that scored at or past the floor of their own seed.

    Args:
        rows: tidy rows of attack cells (the prior's own and diverged cells are skipped).
        table: the tidy table holding the prior's cells (:func:`prior_seed_values`).

    Returns:
        The rows of successful cells, of a metric with a privacy direction ``d``, whose value ``v``
        meets ``d · (p − v) ≤ 0``, with ``p`` the prior's value of :func:`floor_metric` on the same
        dataset, victim, cut and seed (added as ``floor_value``); empty where no prior was run.
    """
    seeds = prior_seed_values(table).dropna(subset=["value"])
    if rows.empty or seeds.empty or "seed" not in rows:
        return rows.iloc[:0].assign(floor_value=pd.Series(dtype=float))
    rows = rows[(rows["status"] == "ok") & (rows["attack"] != PRIOR) & rows["metric"].notna()
                & ~rows["cell_id"].isin(diverged_cells(rows))]
    rows = rows[rows["metric"].map(lambda m: bool(privacy_direction(m)))]
    if rows.empty:
        return rows.assign(floor_value=pd.Series(dtype=float))
    keyed = rows.assign(_floor_metric=rows["metric"].map(floor_metric), _seed=rows["seed"].astype(float))
    floors = seeds.rename(columns={"metric": "_floor_metric", "seed": "_seed", "value": "floor_value"})
    floors = floors.assign(_seed=floors["_seed"].astype(float))[[*FLOOR_KEYS, "_floor_metric", "_seed", "floor_value"]]
    merged = keyed.reset_index().merge(floors, on=[*FLOOR_KEYS, "_floor_metric", "_seed"], how="inner").set_index("index")
    value = merged["value"].astype(float)
    direction = merged["metric"].map(privacy_direction).astype(float)
    past = np.isfinite(value) & (direction * (merged["floor_value"] - value) <= 0)
    return merged[past].drop(columns=["_floor_metric", "_seed"])


def floor_lookup(floor: pd.DataFrame) -> dict[tuple, dict]:
    """The floor as ``{(dataset, victim, cut, metric): row}``."""
    return {tuple(r[k] for k in (*FLOOR_KEYS, "metric")): r for r in floor.to_dict("records")}


def leakage_gap(attack: np.ndarray, prior: np.ndarray, metric: str) -> tuple[float, float]:
    """``(gap, noise)`` of an attack's per-seed values against the floor's (see the module's rules).

    Args:
        attack: the attack's finite values, one per seed (at least one).
        prior: the floor's finite values, one per seed (at least one).
        metric: the metric (its privacy direction signs the gap).

    Returns:
        ``gap = d · (mean(prior) − mean(attack))`` (> 0: the attack beats the floor) and
        ``noise = 2 · √(s_a²/n_a + s_p²/n_p)``.
    """
    a, p = np.asarray(attack, dtype=float), np.asarray(prior, dtype=float)
    return privacy_direction(metric) * float(p.mean() - a.mean()), difference_noise(a, p)


def difference_noise(left: np.ndarray, right: np.ndarray, factor: float = 1.0) -> float:
    """``2 · SE`` of ``mean(left) − factor · mean(right)`` over independent seeds:
    ``2 · √(s_l²/n_l + factor² · s_r²/n_r)``, a side with a single value adding 0."""
    sides = ((np.asarray(left, dtype=float), 1.0), (np.asarray(right, dtype=float), factor ** 2))
    return 2.0 * math.sqrt(sum(w * float(x.var(ddof=1)) / len(x) for x, w in sides if len(x) > 1))


def baseline_notes(table: pd.DataFrame, keys: list[tuple], metrics: list[str]) -> list[str]:
    """One note per (dataset, victim, cut) in ``keys``: the prior's all-black and constant-0.5 image
    scores of the foreground-masked metrics among ``metrics`` (their floor metrics), where stored."""
    floor = floor_lookup(prior_floor(table))
    wanted = list(dict.fromkeys(floor_metric(m) for m in metrics if floor_metric(m).startswith(MASKED_PREFIXES)))
    notes = []
    for key in keys:
        parts = []
        for suffix, image in BASELINES:
            scores = [f"{METRIC_LABELS.get(m, m)} {number(r['mean'], m)}" for m in wanted
                      if (r := floor.get((*key, m + suffix))) is not None and r["n"]]
            if scores:
                parts.append(f"{image} scores {', '.join(scores)}")
        if parts:
            where = f"{DATASET_LABELS.get(key[0], key[0])} {key[1]} {key[2]}"
            notes.append(f"Trivial baselines ({where}, from the prior's cells): {'; '.join(parts)}.")
    return notes
