"""The comparison a new defense gets: a leaderboard against every built-in defense."""
from __future__ import annotations

import pandas as pd

from bench.report.aggregate import victim_fields
from bench.run.cell import Cell

STANDARD_BASELINES = ("raw", "lightsplit-f", "topk", "learned-1x1")
STANDARD_ATTACKS = ("decoder-ref",)
PRIVACY_METRIC = "ssim"  # lower is more private


def defense_knob_columns(table: pd.DataFrame) -> list[str]:
    """The defense knobs of the table other than ``cr`` (e.g. a submitted defense's own setting)."""
    return [c for c in victim_fields(table) if c not in Cell.factor_names()]


def leaderboard(table: pd.DataFrame, *, attack: str, metric: str = PRIVACY_METRIC) -> pd.DataFrame:
    """One row per (defense, its knob values, CR): seed means of the privacy metric under ``attack``,
    accuracy and bytes, ranked from most to least private within each CR (raw is listed with every
    CR). A defense swept over a knob of its own gets one row per value, named ``defense (knob=v)``."""
    ok = table[(table["status"] == "ok") & (table["attack"] == attack)]
    wanted = [metric, "accuracy", "bytes_up_per_sample"]
    rows = ok[ok["metric"].isin(wanted)]
    if rows.empty:
        return pd.DataFrame(columns=["cr", "rank", "defense", metric, "accuracy", "bytes_up_per_sample", "seeds"])
    rows = rows.assign(defense=_named(rows, defense_knob_columns(rows)))
    wide = rows.groupby(["defense", "cr", "seed", "metric"], dropna=False)["value"].mean().unstack("metric")
    wide = wide.reset_index()
    wide["cr"] = wide["cr"].astype(float)
    stats = wide.groupby(["defense", "cr"], dropna=False).agg(
        **{m: (m, "mean") for m in wanted if m in wide}, seeds=("seed", "nunique")
    ).reset_index()
    raw = stats[stats["defense"] == "raw"]
    crs = sorted(c for c in stats["cr"].dropna().unique())
    parts = []
    for cr in crs:
        part = pd.concat([stats[stats["cr"] == cr], raw.assign(cr=cr)])
        part = part.sort_values(metric, na_position="last").assign(rank=range(1, len(part) + 1))
        parts.append(part)
    board = pd.concat(parts) if parts else stats.assign(rank=1)
    return board[["cr", "rank", "defense", *[m for m in wanted if m in board], "seeds"]].reset_index(drop=True)


def _named(rows: pd.DataFrame, knobs: list[str]) -> pd.Series:
    """The defense's name with the values of its own knobs, where it reads any."""

    def name(row: pd.Series) -> str:
        set_ = [f"{k}={row[k]:g}" if isinstance(row[k], float) else f"{k}={row[k]}" for k in knobs if pd.notna(row[k])]
        return f"{row['defense']} ({', '.join(set_)})" if set_ else row["defense"]

    return rows.apply(name, axis=1) if knobs else rows["defense"]


def to_markdown(board: pd.DataFrame, *, attack: str, metric: str = PRIVACY_METRIC) -> str:
    lines = [
        f"Leaderboard: {attack} {metric.upper()} (lower = more private), mean over seeds",
        "",
        f"| CR | rank | defense | {metric} ↓ | accuracy | bytes up / sample | seeds |",
        "|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in board.itertuples(index=False):
        fmt = lambda v, f: "—" if pd.isna(v) else f.format(v)  # noqa: E731
        lines.append(
            f"| {r.cr:g} | {r.rank} | {r.defense} | {fmt(getattr(r, metric), '{:.3f}')} | {fmt(r.accuracy, '{:.4f}')} "
            f"| {fmt(r.bytes_up_per_sample, '{:,.0f}')} | {r.seeds} |"
        )
    return "\n".join(lines) + "\n"
