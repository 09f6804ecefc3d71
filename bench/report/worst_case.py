"""The worst case over attacks: per configuration and metric, the most leaking image attack.

A defense is as private as its strongest attack lets it be. For each trained victim's configuration
(:func:`bench.report.aggregate.victim_fields`: dataset, victim, cut, defense and every defense knob,
``cr`` included) and each privacy metric, the worst case is the seed mean of the attack that leaks
the most: the largest value of a metric where smaller is more private (PRIVACY_DIRECTION −1: SSIM,
PSNR) and the smallest of one where larger is (+1: MSE, LPIPS, masked MSE). Candidates are the
image attacks (:func:`image_attacks`: those whose rows record that they read images, the ``prior``
floor left out), each with its own settings; the same metric name is compared across them
(``ssim`` with ``ssim``, never with ``ssim_minmax``). A configuration where no candidate has a finite mean keeps one
candidate's row (NaN mean, with its note). Ties go to the first attack name.

:func:`seed_worst_cases` takes the strongest attack seed by seed instead (the leaderboard site's
worst case, issue 40): on each seed, the attack (with its settings) that leaks the most on that
seed's trained victim; the mean ± CI is then over those per-seed values, so its count is the number
of seeds that had one, and an attack run on one seed only competes on that seed alone.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from bench.report.aggregate import aggregate, diverged_cells, ok_rows, victim_fields
from bench.report.floor import PRIOR
from bench.report.labels import privacy_direction
from bench.run.table import ATTACK_KNOB_PREFIX, attacks_reading

IMAGE, TABULAR = "image", "tabular"


def competing_attacks(table: pd.DataFrame, kind: str = IMAGE) -> frozenset[str]:
    """The attacks of ``table`` that compete for the worst case on ``kind`` data: those whose rows
    record that they read it (``attack_kinds``), the floor (``prior``) left out."""
    return attacks_reading(table, kind) - {PRIOR}


def image_attacks(table: pd.DataFrame) -> frozenset[str]:
    """The reconstruction attacks on images of ``table`` (:func:`competing_attacks` on images)."""
    return competing_attacks(table, IMAGE)


def pick_worst(frame: pd.DataFrame, *, value: str, metric: str, group: list[str], attack: str = "attack") -> pd.DataFrame:
    """The row of each group whose ``value`` leaks the most on ``metric`` (NaN values last, ties to
    the first ``attack`` name), in group order.

    Raises:
        ValueError: ``metric`` has no privacy direction.
    """
    direction = privacy_direction(metric)
    if not direction:
        raise ValueError(f"metric '{metric}' has no privacy direction: no worst case")
    ordered = frame.assign(_leak=frame[value] * direction).sort_values(
        [*group, "_leak", attack], na_position="last", kind="stable")
    return ordered.drop_duplicates(group).drop(columns="_leak").reset_index(drop=True)


def worst_case(table: pd.DataFrame, metrics: Iterable[str] | None = None, *, level: float = 0.95,
               kind: str = IMAGE) -> pd.DataFrame:
    """The worst case per (victim configuration, metric) over every attack of ``table`` on ``kind`` data.

    Args:
        table: a tidy table of one profile.
        metrics: the metrics (default: every metric with a privacy direction the attacks recorded);
            metrics without a direction are skipped.
        level: confidence level of the intervals.
        kind: the data kind whose attacks compete (:func:`competing_attacks`; default images, the
            site also asks for tabular data, where each HAR probe is the only one recording its metric).

    Returns:
        One row per (configuration, metric): the :func:`victim_fields`, ``metric``, ``attack`` (the
        one that reached it) with its settings' columns, and its statistics as
        :func:`bench.report.aggregate.aggregate` computes them (``mean, ci, n, n_runs, ...``).
    """
    rows = table[table["attack"].isin(competing_attacks(table, kind)) & table["metric"].notna()]
    present = list(dict.fromkeys(rows["metric"]))
    wanted = [m for m in (present if metrics is None else metrics) if privacy_direction(m) and m in present]
    if rows.empty or not wanted:
        return pd.DataFrame(columns=[*victim_fields(table), "metric", "attack", "mean", "ci", "n"])
    agg = aggregate(rows, metrics=wanted, level=level)
    fields = victim_fields(agg)
    parts = [pick_worst(agg[agg["metric"] == m], value="mean", metric=m, group=fields) for m in sorted(wanted)]
    return pd.concat(parts, ignore_index=True)


def seed_worst_cases(table: pd.DataFrame, metrics: Iterable[str] | None = None, *, kind: str = IMAGE) -> pd.DataFrame:
    """Per (victim configuration, metric, seed): the attack that leaks the most on that seed.

    Candidates are :func:`competing_attacks` on ``kind`` data, each (attack, settings) with the
    mean over its cells of the seed (several folders may store one); diverged cells and non-finite
    values are left out, so a seed whose every candidate diverged has no row.

    Args:
        table: a tidy table of one profile.
        metrics: the metrics (default: every metric with a privacy direction the attacks recorded).
        kind: the data kind whose attacks compete.

    Returns:
        One row per (configuration, metric, seed): the :func:`victim_fields`, ``metric``, ``seed``,
        ``attack`` with its settings' columns (``attack_<knob>``) and ``value``; ties to the first
        attack name.
    """
    rows = ok_rows(table)
    fields = victim_fields(rows)
    settings = [c for c in rows.columns if c.startswith(ATTACK_KNOB_PREFIX)]
    columns = [*fields, "metric", "seed", "attack", *settings, "value"]
    rows = rows[rows["attack"].isin(competing_attacks(table, kind)) & ~rows["cell_id"].isin(diverged_cells(table))]
    rows = rows[np.isfinite(rows["value"].astype(float))]
    wanted = [m for m in dict.fromkeys(rows["metric"]) if privacy_direction(m) and (metrics is None or m in metrics)]
    rows = rows[rows["metric"].isin(wanted)]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    means = rows.groupby([*fields, "metric", "seed", "attack", *settings], dropna=False)["value"].mean().reset_index()
    parts = [pick_worst(means[means["metric"] == m], value="value", metric=m, group=[*fields, "metric", "seed"])
             for m in sorted(wanted)]
    return pd.concat(parts, ignore_index=True)[columns]
