"""The worst case over attacks: per configuration and metric, the most leaking image attack, seed by seed.

A defense is as private as its strongest attack lets it be. For each trained victim's configuration
(:func:`bench.report.aggregate.victim_fields`: dataset, victim, cut, defense and every defense knob,
``cr`` included) and each privacy metric, :func:`seed_worst_cases` takes, on each seed's trained
victim, the attack (with its settings) that leaks the most on that seed: the largest value of a
metric where smaller is more private (PRIVACY_DIRECTION −1: SSIM, PSNR) and the smallest of one where
larger is (+1: MSE, LPIPS, masked MSE). :func:`worst_case` is the mean ± CI over those per-seed
values, so its count is the number of seeds that had one, an attack run on one seed only competes on
that seed alone, and a seed where an attack failed is not averaged with the seeds where it worked
(issue 40). The attack it names is the one strongest on the most seeds (ties: the one that leaked
more where it won, then the first name). Candidates are the image attacks (:func:`image_attacks`:
those whose rows record that they read images, the ``prior`` floor left out), each with its own
settings; the same metric name is compared across them (``ssim`` with ``ssim``, never with
``ssim_minmax``). A configuration where no seed has a finite value keeps the seed-mean pick of one
candidate (NaN mean, with its note). The tables, the leaderboard and the site all read this one rule.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np
import pandas as pd

from bench.report.aggregate import aggregate, config_key, diverged_cells, ok_rows, plain_key, t_halfwidth, victim_fields
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
    """The worst case per (victim configuration, metric), seed by seed, over every attack of ``table``
    on ``kind`` data (see the module's rules).

    Args:
        table: a tidy table of one profile.
        metrics: the metrics (default: every metric with a privacy direction the attacks recorded);
            metrics without a direction are skipped.
        level: confidence level of the intervals.
        kind: the data kind whose attacks compete (:func:`competing_attacks`; default images, the
            site also asks for tabular data, where each HAR probe is the only one recording its metric).

    Returns:
        One row per (configuration, metric): the :func:`victim_fields`, ``metric``, ``attack`` (the
        most frequent per-seed winner) with its settings' columns, and the statistics as
        :func:`bench.report.aggregate.aggregate` names them: ``mean, ci, n`` over the per-seed
        values, ``n_runs`` (seeds with a competing cell), ``n_diverged`` (seeds whose every competing
        cell diverged), ``note``, ``is_raw``; the paired deltas against raw are NaN and ``n_pairs`` 0
        (the worst case is shown absolute).
    """
    rows = table[table["attack"].isin(competing_attacks(table, kind)) & table["metric"].notna()]
    present = list(dict.fromkeys(rows["metric"]))
    wanted = [m for m in (present if metrics is None else metrics) if privacy_direction(m) and m in present]
    if rows.empty or not wanted:
        return pd.DataFrame(columns=[*victim_fields(table), "metric", "attack", "mean", "ci", "n"])
    agg = aggregate(rows, metrics=wanted, level=level)
    fields = victim_fields(agg)
    picked = pd.concat([pick_worst(agg[agg["metric"] == m], value="mean", metric=m, group=fields) for m in sorted(wanted)],
                       ignore_index=True)
    per_seed = seed_worst_cases(table, wanted, kind=kind)
    if per_seed.empty:
        return picked
    settings = [c for c in picked.columns if c.startswith(ATTACK_KNOB_PREFIX)]
    stored = _seeds_stored(table, kind, fields)
    # One pass over narrow records: a DataFrame per group (and its records) was most of the site's build.
    by_key: dict[tuple, list[dict]] = {}
    for seed in per_seed.sort_values("seed", kind="stable")[[*fields, "metric", "attack", *settings, "value"]].to_dict("records"):
        by_key.setdefault(config_key(seed, (*fields, "metric")), []).append(seed)
    seed_stats = {}
    for key, seeds in by_key.items():
        values = np.array([s["value"] for s in seeds], dtype=float)
        runs, dropped = stored.get(key, (len(values), 0))
        seed_stats[key] = {
            **most_frequent_winner(seeds, key[-1], settings),
            "mean": float(values.mean()), "ci": t_halfwidth(values, level), "n": len(values),
            "n_runs": max(runs, len(values)), "n_diverged": dropped, "note": None,
            **{c: np.nan for c in ("delta", "delta_ci", "rel", "rel_ci") if c in picked.columns},
            **({"n_pairs": 0} if "n_pairs" in picked.columns else {})}
    out = []
    for row in picked.to_dict("records"):
        out.append({**row, **seed_stats.get(config_key(row, (*fields, "metric")), {})})
    return pd.DataFrame(out, columns=picked.columns)


def most_frequent_winner(seeds: list[dict], metric: str, settings: list[str]) -> dict:
    """``{"attack": ..., <settings>: ...}`` of the (attack, settings) strongest on the most seeds
    (ties: the one that leaked more where it won, then the first name) among per-seed winners."""
    def who(s: dict) -> tuple:
        return (s["attack"], *config_key(s, settings))

    wins = Counter(who(s) for s in seeds)
    leak = {w: max(privacy_direction(metric) * -s["value"] for s in seeds if who(s) == w) for w in wins}
    best = min(wins, key=lambda w: (-wins[w], -leak[w], w[0], str(w[1:])))
    return dict(zip(["attack", *settings], (best[0], *(np.nan if v is None else v for v in best[1:]))))


def _seeds_stored(table: pd.DataFrame, kind: str, fields: list[str]) -> dict[tuple, tuple[int, int]]:
    """Per (configuration key, metric) as plain tuples: seeds with a competing cell stored, and seeds
    whose every competing cell diverged."""
    rows = ok_rows(table)
    rows = rows[rows["attack"].isin(competing_attacks(table, kind))]
    if rows.empty:
        return {}
    rows = rows.assign(_diverged=rows["cell_id"].isin(diverged_cells(table)))
    per_seed = rows.groupby([*fields, "metric", "seed"], dropna=False)["_diverged"].all().reset_index()
    counts = per_seed.groupby([*fields, "metric"], dropna=False)["_diverged"].agg(["size", "sum"])
    return {plain_key(key): (int(size), int(dropped)) for key, size, dropped in zip(counts.index, counts["size"], counts["sum"])}


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
