"""Convergence of every attack: quality at ×¼, ×1 and ×4 of its budget, from stored cells alone.

An attack has converged at its budget when four times the budget buys at most ``SSIM_TOLERANCE``
SSIM (UnSplit: at most ``UNSPLIT_TOLERANCE`` of its headline metric, the min-max masked MSE). Where
×16 cells are stored too, the same test is made of ×4 against ×16.
Reads a results folder made by, e.g.::

    bench run --profile cpu --defense raw,lightsplit-f --cr 8 --attack decoder-ref,unsplit,sdar,fora,fsha \
        --attack-budget 0.25,1,4 --seeds 0 --out results/issue12-convergence

and writes ``convergence.md`` (the table) and ``convergence.png`` (quality against budget) beside it::

    python benchmarks/convergence.py results/issue12-convergence
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

SSIM_TOLERANCE = 0.02
UNSPLIT_TOLERANCE = 0.05
HEADLINE = {"unsplit": ("masked_mse_minmax", -1)}  # metric, sign: -1 = lower is a stronger attack


def _verdict(gain: float, tolerance: float) -> str:
    """``yes`` when the larger budget buys at most the tolerance, ``no`` when it is still climbing;
    ``yes, falls`` when the larger budget loses more than the tolerance: no gain, as the criterion
    asks, but an attack that gets worse with more steps is unstable there (or collapsed), which the
    table should not hide."""
    if gain < -tolerance:
        return "yes, falls"
    return "yes" if gain <= tolerance else "no"


def convergence_table(long: pd.DataFrame) -> pd.DataFrame:
    """One row per (attack, defense, cr): the headline metric at each budget (mean over seeds), the ×4
    gain over ×1 (positive: the attack got stronger), the tolerance, the verdict and the attack seconds
    of one ×4 cell (what a ×4 budget would cost)."""
    ok = long[(long["status"] == "ok") & long["attack"].ne("none")].copy()
    ok["attack_budget"] = pd.to_numeric(ok["attack_budget"], errors="coerce").fillna(1.0)
    rows = []
    for (attack, defense, cr), cells in ok.groupby(["attack", "defense", "cr"], dropna=False):
        metric, sign = HEADLINE.get(attack, ("ssim", 1))
        values = cells[cells["metric"] == metric].groupby("attack_budget")["value"].agg(["mean", "count"])
        seconds = cells[cells["metric"] == "attack_seconds"].groupby("attack_budget")["value"].mean()
        row = {"attack": attack, "defense": defense, "cr": cr, "metric": metric}
        for budget, stats in values.iterrows():
            row[f"x{budget:g}"] = stats["mean"]
            row[f"seeds x{budget:g}"] = int(stats["count"])
        for low, high, name in ((1.0, 4.0, "converged"), (4.0, 16.0, "converged at x4")):
            if low in values.index and high in values.index:
                gain = sign * (values.loc[high, "mean"] - values.loc[low, "mean"])
                tolerance = SSIM_TOLERANCE if metric == "ssim" else UNSPLIT_TOLERANCE * abs(values.loc[low, "mean"])
                row.update({f"gain x{high:g} vs x{low:g}": gain, f"tolerance x{low:g}": tolerance,
                            name: _verdict(gain, tolerance)})
        if 4.0 in seconds.index:
            row["attack s at x4"] = seconds.loc[4.0]
        rows.append(row)
    table = pd.DataFrame(rows)
    return table[[c for c in table.columns if c != "attack s at x4"] + ["attack s at x4"]]


def convergence_figure(long: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = long[(long["status"] == "ok") & long["attack"].ne("none")].copy()
    ok["attack_budget"] = pd.to_numeric(ok["attack_budget"], errors="coerce").fillna(1.0)
    attacks = sorted(ok["attack"].unique())
    fig, axes = plt.subplots(1, len(attacks), figsize=(3.2 * len(attacks), 2.8), squeeze=False)
    for ax, attack in zip(axes[0], attacks):
        metric, _ = HEADLINE.get(attack, ("ssim", 1))
        sub = ok[(ok["attack"] == attack) & (ok["metric"] == metric)]
        for defense, cells in sub.groupby("defense"):
            mean = cells.groupby("attack_budget")["value"].mean()
            ax.plot(mean.index, mean.values, marker="o", label=defense)
        ax.set_xscale("log", base=2)
        ax.set_title(attack)
        ax.set_xlabel("budget (× cpu)")
        ax.set_ylabel(metric)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def markdown(table: pd.DataFrame) -> str:
    """A pipe table (numbers to four decimals, counts as integers, gaps blank)."""

    def cell(value) -> str:
        if isinstance(value, float):
            return "" if pd.isna(value) else f"{value:.4f}"
        return str(value)

    lines = ["| " + " | ".join(table.columns) + " |", "| " + " | ".join("---" for _ in table.columns) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path)
    args = parser.parse_args()
    long = pd.read_csv(args.results / "results.csv")
    table = convergence_table(long)
    (args.results / "convergence.md").write_text(markdown(table))
    convergence_figure(long, args.results / "convergence.png")
    print(markdown(table), end="")


if __name__ == "__main__":
    main()
