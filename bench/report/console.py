"""The table ``bench run`` prints at the end: utility, bytes and attack scores, mean over seeds."""
from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.table import Table

from bench.run.cell import ID_KNOB_SLOTS, Cell
from bench.run.table import ATTACK_KNOB_PREFIX, factor_columns

# Factors shown in their own column; every other factor column is a knob, shown as name=value.
KNOWN = (frozenset(Cell.factor_names()) - frozenset(ID_KNOB_SLOTS)) | {"seeds"}

SHOWN = (
    ("accuracy", "acc", "{:.4f}"),
    ("accuracy_delta_vs_raw", "Δacc vs raw", "{:+.4f}"),
    ("best_val_perplexity", "best ppl", "{:.2f}"),
    ("perplexity_inflation", "ppl ×raw", "{:.3f}"),
    ("bytes_up_per_sample", "B up/sample", "{:,.0f}"),
    ("bytes_down_per_sample", "B down/sample", "{:,.0f}"),
    ("realized_cr", "CR (bytes)", "{:.2f}"),
    ("ssim", "SSIM", "{:.3f}"),
    ("masked_mse", "masked MSE", "{:.4f}"),
    ("masked_mse_minmax", "masked MSE (min-max)", "{:.4f}"),  # UnSplit's released scoring, beside the plain one
    ("lpips", "LPIPS", "{:.3f}"),
    ("median_r2", "median R²", "{:.3f}"),
    ("reid_accuracy", "re-ID acc", "{:.3f}"),
    ("dp_epsilon_total", "ε (δ=1e-5)", "{:.3g}"),
)


def utility_summary(table: pd.DataFrame, cells: list[Cell]) -> pd.DataFrame:
    """Mean over seeds of the shown metrics for the given cells, one row per configuration."""
    ids = {c.id for c in cells}
    ok = table[table["cell_id"].isin(ids) & (table["status"] == "ok")]
    ok = ok[ok["metric"].isin([m for m, _, _ in SHOWN])]
    if ok.empty:
        return pd.DataFrame()
    group = [c for c in factor_columns(ok) if c != "seed" and ok[c].notna().any()]
    wide = ok.groupby(group + ["seed", "metric"], dropna=False)["value"].mean().unstack("metric").reset_index()
    seeds = wide.groupby(group, dropna=False)["seed"].nunique().rename("seeds")
    means = wide.drop(columns="seed").groupby(group, dropna=False).mean(numeric_only=True)
    return means.join(seeds).reset_index()


def print_utility_table(table: pd.DataFrame, cells: list[Cell]) -> None:
    """Print :func:`utility_summary` as a table, one row per configuration; numbers are never truncated."""
    summary = utility_summary(table, cells)
    if summary.empty:
        return
    out = Table(title="results (mean over seeds)")
    knobs = [c for c in summary.columns if c not in KNOWN and c not in {m for m, _, _ in SHOWN}
             and not (c.startswith(ATTACK_KNOB_PREFIX) and summary[c].nunique() <= 1)]  # attack settings only if swept
    shown = [(m, h, f) for m, h, f in SHOWN if m in summary.columns and summary[m].notna().any()]
    rows = []
    for row in summary.itertuples(index=False):
        r = row._asdict()
        set_ = [f"{k}={r[k]:g}" if isinstance(r[k], float) else f"{k}={r[k]}" for k in knobs if not pd.isna(r[k])]
        cells_ = [r["dataset"], r["defense"], " ".join(set_) or "-", f"{r['lambda_wcc']:g}", r["attack"], str(r["seeds"])]
        rows.append(cells_ + ["—" if pd.isna(r[m]) else f.format(r[m]) for m, _, f in shown])
    for i, name in enumerate(("dataset", "defense", "knobs", "λ_wcc", "attack", "seeds")):  # names on one line
        out.add_column(name, no_wrap=True, min_width=max(len(r[i]) for r in rows))
    for i, (_, header, _) in enumerate(shown, start=6):  # a number is never cut short: its header wraps instead
        out.add_column(header, justify="right", min_width=max(len(r[i]) for r in rows))
    for cells_ in rows:
        out.add_row(*cells_)
    Console(width=max(Console().width, 150)).print(out)
