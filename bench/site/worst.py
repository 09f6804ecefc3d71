"""The site's worst case: :func:`bench.report.worst_case.worst_case` (the strongest attack seed by
seed, then mean ± CI over those seeds; the rule the tables and the leaderboard read too), with every
seed's own winner kept beside it (:func:`bench.report.worst_case.seed_worst_cases`).
"""
from __future__ import annotations

from collections import defaultdict

import pandas as pd

from bench.report.aggregate import config_key
from bench.report.worst_case import seed_worst_cases, worst_case
from bench.site.values import plain


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
        Every :func:`~bench.report.worst_case.worst_case` row (``mean, ci, n, n_runs, n_diverged, note``,
        ``attack`` and its settings' columns: the most frequent per-seed winner, or the seed-mean
        pick where no seed has a finite value) with ``seeds``: ``[{"seed", "attack", "settings_key",
        "value"}]`` by seed (empty where no seed has a winner).
    """
    seeds: dict[tuple, list[dict]] = defaultdict(list)
    for row in seed_worst_cases(table, kind=kind).to_dict("records"):
        seeds[config_key(row, fields), row["metric"]].append(
            {"seed": int(row["seed"]), "attack": row["attack"], "settings_key": config_key(row, attack_fields),
             "value": float(row["value"])})
    out: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for row in worst_case(table, level=level, kind=kind).to_dict("records"):
        key = config_key(row, fields)
        out[key][row["metric"]] = {**row, "seeds": sorted(seeds.get((key, row["metric"]), []), key=lambda s: s["seed"])}
    return out


def seeds_json(item: dict, settings) -> list[dict]:
    """The per-seed winners as the entry holds them (``settings``: a settings key → mapping)."""
    return [{"seed": s["seed"], "attack": s["attack"], "settings": settings(s["settings_key"]), "value": plain(s["value"])}
            for s in item.get("seeds", [])]
