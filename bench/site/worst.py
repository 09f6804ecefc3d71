"""The site's worst case: the strongest attack seed by seed, then mean ± CI over those seeds.

:func:`bench.report.worst_case.seed_worst_cases` picks, on each seed's trained victim, the attack
(with its settings) that leaks the most. Here those per-seed values become one statistic per
(configuration, metric): its ``n`` is the number of seeds that had a value (the count the mean and
CI use, shown as the row's seed count), ``n_runs`` the seeds with any competing cell stored. The
attack the row names is the one that was strongest on the most seeds (ties: the one that leaked
more where it won, then the first name); every seed's own winner is kept beside it.
"""
from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pandas as pd

from bench.report.aggregate import diverged_cells, ok_rows, t_halfwidth
from bench.report.labels import privacy_direction
from bench.report.worst_case import competing_attacks, seed_worst_cases
from bench.site.values import key_of, plain


def seed_worst_rows(table: pd.DataFrame, *, fields: list[str], attack_fields: list[str], kind: str,
                    level: float = 0.95) -> dict[tuple, dict[str, dict]]:
    """``{configuration key: {metric: row}}`` of the per-seed worst case on ``kind`` data.

    Args:
        table: a tidy table of one profile (numeric factors as floats).
        fields: the configuration's fields (the keys' order).
        attack_fields: the attack settings' columns.
        kind: the data kind whose attacks compete.
        level: confidence level of the interval.

    Returns:
        Rows as :func:`bench.report.aggregate.aggregate` names their statistics (``mean, ci, n,
        n_runs, n_diverged, note``), with ``attack`` and its settings' columns (the most frequent
        per-seed winner) and ``seeds``: ``[{"seed", "attack", "settings_key", "value"}]`` by seed.
    """
    per_seed = seed_worst_cases(table, kind=kind)
    if per_seed.empty:
        return {}
    stored = _seeds_stored(table, kind, fields)
    out: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for row in per_seed.to_dict("records"):
        key = key_of(row, fields)
        item = out[key].setdefault(row["metric"], {"seeds": []})
        item["seeds"].append({"seed": int(row["seed"]), "attack": row["attack"], "settings_key": key_of(row, attack_fields),
                              "value": float(row["value"])})
    for key, metrics in out.items():
        for metric, item in metrics.items():
            seeds = sorted(item["seeds"], key=lambda s: s["seed"])
            values = np.array([s["value"] for s in seeds])
            attack, settings_key = _most_frequent_winner(seeds, metric)
            runs, dropped = stored.get((key, metric), (len(seeds), 0))
            item.update({"seeds": seeds, "attack": attack, **dict(zip(attack_fields, settings_key)),
                         "mean": float(values.mean()), "ci": t_halfwidth(values, level), "n": len(values),
                         "n_runs": max(runs, len(values)), "n_diverged": dropped, "note": None})
    return out


def _most_frequent_winner(seeds: list[dict], metric: str) -> tuple[str, tuple]:
    wins = Counter((s["attack"], s["settings_key"]) for s in seeds)
    leak = {w: max(privacy_direction(metric) * -s["value"] for s in seeds if (s["attack"], s["settings_key"]) == w) for w in wins}
    return min(wins, key=lambda w: (-wins[w], -leak[w], w[0], str(w[1])))


def _seeds_stored(table: pd.DataFrame, kind: str, fields: list[str]) -> dict[tuple, tuple[int, int]]:
    """Per (configuration key, metric): seeds with a competing cell stored, and seeds whose every
    competing cell diverged."""
    rows = ok_rows(table)
    rows = rows[rows["attack"].isin(competing_attacks(table, kind))]
    if rows.empty:
        return {}
    rows = rows.assign(_diverged=rows["cell_id"].isin(diverged_cells(table)))
    per_seed = rows.groupby([*fields, "metric", "seed"], dropna=False)["_diverged"].all().reset_index()
    counts = per_seed.groupby([*fields, "metric"], dropna=False)["_diverged"].agg(["size", "sum"])
    return {(key_of(dict(zip(fields, config)), fields), metric): (int(size), int(dropped))
            for (*config, metric), size, dropped in zip(counts.index, counts["size"], counts["sum"])}


def seeds_json(item: dict, settings) -> list[dict]:
    """The per-seed winners as the entry holds them (``settings``: a settings key → mapping)."""
    return [{"seed": s["seed"], "attack": s["attack"], "settings": settings(s["settings_key"]), "value": plain(s["value"])}
            for s in item.get("seeds", [])]
