"""The comparison a new defense gets: a leaderboard against every built-in defense.

Defenses are ranked by their worst-case leakage, seed by seed as :mod:`bench.report.worst_case` reads
it: per row and seed the most leaking image attack stored (:func:`bench.report.worst_case.image_attacks`),
then the mean over seeds (the attack strongest on the most seeds is named), the named attack's own
column kept beside it. Rows whose worst case ties, or that have none, fall back to the named
attack's value, as the board ranked before.
"""
from __future__ import annotations

import pandas as pd

from bench.report.aggregate import at_default_settings, victim_fields
from bench.report.labels import privacy_direction
from bench.report.worst_case import image_attacks, most_frequent_winner, pick_worst
from bench.run.cell import Cell

STANDARD_BASELINES = ("raw", "lightsplit-f", "topk", "learned-1x1")
STANDARD_ATTACKS = ("decoder-ref",)
PRIVACY_METRIC = "ssim"  # lower is more private
WORST, WORST_ATTACK = "worst_case", "worst_case_attack"


def defense_knob_columns(table: pd.DataFrame) -> list[str]:
    """The defense knobs of the table other than ``cr`` (e.g. a submitted defense's own setting)."""
    return [c for c in victim_fields(table) if c not in Cell.factor_names()]


def leaderboard(table: pd.DataFrame, *, attack: str, metric: str = PRIVACY_METRIC) -> pd.DataFrame:
    """One row per (defense, its knob values, CR): seed means of the privacy metric under ``attack``,
    the worst case over every image attack (``worst_case``, reached by ``worst_case_attack``),
    accuracy and bytes, ranked from most to least private worst case within each CR, ties and rows
    without a worst case by ``attack``'s value (raw is listed with every CR). A defense swept over a
    knob of its own gets one row per value, named ``defense (knob=v)``."""
    ok = table[table["status"] == "ok"]
    wanted = [metric, "accuracy", "bytes_up_per_sample"]
    rows = at_default_settings(ok[(ok["attack"] == attack) & ok["metric"].isin(wanted)])
    columns = ["cr", "rank", "defense", metric, WORST, WORST_ATTACK, "accuracy", "bytes_up_per_sample", "seeds"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    knobs = defense_knob_columns(ok)
    rows = rows.assign(defense=_named(rows, knobs))
    wide = rows.groupby(["defense", "cr", "seed", "metric"], dropna=False)["value"].mean().unstack("metric")
    wide = wide.reset_index()
    wide["cr"] = wide["cr"].astype(float)
    stats = wide.groupby(["defense", "cr"], dropna=False).agg(
        **{m: (m, "mean") for m in wanted if m in wide}, seeds=("seed", "nunique")
    ).reset_index()
    stats = stats.assign(**{m: float("nan") for m in wanted if m not in stats})  # an attack that does not record it
    stats = stats.merge(_worst(ok, knobs, metric), on=["defense", "cr"], how="left")
    sign = privacy_direction(metric) or -1  # a metric without a direction ranks as SSIM does: lower first
    raw = stats[stats["defense"] == "raw"]
    parts = []
    for cr in sorted(c for c in stats["cr"].dropna().unique()):
        part = pd.concat([stats[stats["cr"] == cr], raw.assign(cr=cr)], ignore_index=True)
        part = part.assign(_w=-sign * part[WORST], _a=-sign * part[metric])
        part = part.sort_values(["_w", "_a"], na_position="last", kind="stable").drop(columns=["_w", "_a"])
        parts.append(part.assign(rank=range(1, len(part) + 1)))
    board = pd.concat(parts) if parts else stats.assign(rank=1)
    return board[[c for c in columns if c in board]].reset_index(drop=True)


def _worst(ok: pd.DataFrame, knobs: list[str], metric: str) -> pd.DataFrame:
    """Per (named defense, CR): on each seed the most leaking image attack's ``metric``, then the mean
    over seeds, with the attack strongest on the most seeds."""
    rows = ok[ok["attack"].isin(image_attacks(ok)) & (ok["metric"] == metric)]
    if rows.empty or not privacy_direction(metric):
        return pd.DataFrame(columns=["defense", "cr", WORST, WORST_ATTACK])
    rows = rows.assign(defense=_named(rows, knobs), cr=rows["cr"].astype(float))
    seeds = rows.groupby(["defense", "cr", "attack", "seed"], dropna=False)["value"].mean().reset_index()
    per_seed = pick_worst(seeds.dropna(subset=["value"]), value="value", metric=metric, group=["defense", "cr", "seed"])
    out = [{"defense": defense, "cr": cr, WORST: float(won["value"].mean()),
            WORST_ATTACK: most_frequent_winner(won.to_dict("records"), metric, [])["attack"]}
           for (defense, cr), won in per_seed.groupby(["defense", "cr"], dropna=False, sort=False)]
    return pd.DataFrame(out, columns=["defense", "cr", WORST, WORST_ATTACK])


def _named(rows: pd.DataFrame, knobs: list[str]) -> pd.Series:
    """The defense's name with the values of its own knobs, where it reads any."""
    knobs = [k for k in knobs if k in rows]

    def name(row: pd.Series) -> str:
        set_ = [f"{k}={row[k]:g}" if isinstance(row[k], float) else f"{k}={row[k]}" for k in knobs if pd.notna(row[k])]
        return f"{row['defense']} ({', '.join(set_)})" if set_ else row["defense"]

    return rows.apply(name, axis=1) if knobs else rows["defense"]


def to_markdown(board: pd.DataFrame, *, attack: str, metric: str = PRIVACY_METRIC) -> str:
    more = {1: "higher", -1: "lower"}.get(privacy_direction(metric), "lower")
    arrow = "↑" if more == "higher" else "↓"
    lines = [
        f"Leaderboard: ranked by the worst-case {metric.upper()} over every image attack stored ({more} = more "
        f"private; ties by {attack}), mean over seeds",
        "",
        f"| CR | rank | defense | worst-case {metric} {arrow} | worst attack | {attack} {metric} {arrow} | accuracy "
        "| bytes up / sample | seeds |",
        "|---:|---:|---|---:|---|---:|---:|---:|---:|",
    ]
    fmt = lambda v, f: "—" if pd.isna(v) else f.format(v)  # noqa: E731
    for r in board.to_dict("records"):
        lines.append(
            f"| {r['cr']:g} | {r['rank']} | {r['defense']} | {fmt(r.get(WORST), '{:.3f}')} "
            f"| {fmt(r.get(WORST_ATTACK), '{}')} | {fmt(r.get(metric), '{:.3f}')} | {fmt(r.get('accuracy'), '{:.4f}')} "
            f"| {fmt(r.get('bytes_up_per_sample'), '{:,.0f}')} | {r['seeds']} |"
        )
    return "\n".join(lines) + "\n"
