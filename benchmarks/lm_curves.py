"""Perplexity inflation over Raw at every evaluation step of stored language-model cells.

Each cell's ``best_val_perplexity`` note holds its evaluation curve (``step:perplexity, ...``); this
divides every point by the matched raw cell's point at the same step (same size, seed and profile)
and prints the mean over seeds as a Markdown table, one row per (profile, size, defense, CR).

    python benchmarks/lm_curves.py results/issue15-wikitext2 [results/issue15-wikitext2-x4 ...]
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd


def curves(folder: Path) -> pd.DataFrame:
    """One row per (cell, evaluation step): its factors, the step and the perplexity there."""
    table = pd.read_parquet(folder / "results.parquet")
    rows = table[(table["metric"] == "best_val_perplexity") & (table["status"] == "ok")]
    out = []
    for row in rows.itertuples():
        for step, ppl in re.findall(r"(\d+):([\d.]+)", row.note.split(":", 1)[1]):
            out.append({"profile": row.profile, "cut": row.cut, "defense": row.defense, "cr": row.cr,
                        "seed": row.seed, "cell_id": row.cell_id, "raw_cell_id": row.raw_cell_id,
                        "step": int(step), "ppl": float(ppl)})
    return pd.DataFrame(out)


def inflation_by_step(points: pd.DataFrame) -> pd.DataFrame:
    raw = points[points["defense"] == "raw"].set_index(["cell_id", "step"])["ppl"]
    defended = points[points["defense"] != "raw"].copy()
    defended["inflation"] = [p / raw.get((r, s), float("nan"))
                             for p, r, s in zip(defended["ppl"], defended["raw_cell_id"], defended["step"])]
    wide = defended.groupby(["profile", "cut", "defense", "cr", "step"])["inflation"].agg(["mean", "count"])
    return wide.reset_index()


def main() -> None:
    points = pd.concat([curves(Path(folder)) for folder in sys.argv[1:]], ignore_index=True)
    table = inflation_by_step(points)
    steps = sorted(table["step"].unique())
    print("| profile | size | defense | CR | seeds | " + " | ".join(f"step {s}" for s in steps) + " |")
    print("| --- | --- | --- | --- | --- | " + " | ".join("---:" for _ in steps) + " |")
    for (profile, cut, defense, cr), group in table.groupby(["profile", "cut", "defense", "cr"]):
        values = dict(zip(group["step"], group["mean"]))
        seeds = int(group["count"].max())
        cells = " | ".join(f"{values[s]:.3f}" if s in values else "" for s in steps)
        print(f"| {profile} | {cut} | {defense} | {cr:g} | {seeds} | {cells} |")


if __name__ == "__main__":
    main()
