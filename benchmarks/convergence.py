"""Convergence of every attack: quality at ×¼, ×1 and ×4 of its budget, from stored cells alone.

An attack has converged at its budget when four times the budget buys at most a tolerance on its
headline metric on every seed stored at both, seed by seed on the same trained victims (the rule of
:mod:`bench.report.convergence`: 0.02 SSIM, else 5% of the seed's value; a seed that falls by more
makes it unstable; without four times the budget stored it is unknown). Where ×16 cells are stored
too, the same test is made of ×4 against ×16.
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

from bench.report.aggregate import config_fields
from bench.report.convergence import Convergence, judge_cells
from bench.run.table import headline_metrics, with_attack_facts


def convergence_table(long: pd.DataFrame) -> pd.DataFrame:
    """One row per attacked configuration stored at two budgets or more: the headline metric at each
    budget (mean over its seeds), then for ×4 against ×1 and ×16 against ×4 the seeds stored at both
    (``seeds x4 vs x1``), each one's gain (positive: the attack got stronger; ``s0 +0.0100, ...``), the
    tolerance and the verdict of :func:`bench.report.convergence.judge_cells` (seed by seed on the same
    victims, never on the means), and the attack seconds of one ×4 cell (what a ×4 budget would cost).
    Configurations are told apart by every factor (λ_WCC, DP σ, victim, ...); only the factors that
    vary get a column."""
    long = with_attack_facts(long)  # a results.csv collected before rows recorded the headline metric
    ok = long[(long["status"] == "ok") & long["attack"].ne("none")].copy()
    ok["attack_budget"] = pd.to_numeric(ok["attack_budget"], errors="coerce").fillna(1.0)
    if "attack_precision" in ok:
        ok = ok[ok["attack_precision"].isna() | ok["attack_precision"].eq("float32")]
    keys = [c for c in config_fields(ok) if c not in ("attack_budget", "attack_precision")]
    headlines = headline_metrics(ok)
    rows = []
    for key, cells in ok.groupby(keys, dropna=False):
        config = dict(zip(keys, key))
        metric = headlines[config["attack"]]
        values = cells[cells["metric"] == metric].pivot_table(index="seed", columns="attack_budget", values="value")
        if values.shape[1] < 2:
            continue
        judged = {r["budget"]: r["convergence"] for r in judge_cells(cells).to_dict("records")}
        seconds = cells[cells["metric"] == "attack_seconds"].groupby("attack_budget")["value"].mean()
        row = {**config, "metric": metric}
        for budget in values.columns:
            row[f"x{budget:g}"] = values[budget].mean()
            row[f"seeds x{budget:g}"] = int(values[budget].count())
        for low, name in ((1.0, "converged"), (4.0, "converged at x4")):
            if low in judged:
                row.update(_verdict_columns(judged[low], name))
        if 4.0 in seconds.index:
            row["attack s at x4"] = seconds.loc[4.0]
        rows.append(row)
    table = pd.DataFrame(rows)
    budgets = sorted({float(c[1:]) for c in table.columns if c.startswith("x")})
    columns = ["metric"]
    for budget in sorted({*budgets, *(b * 4 for b in budgets)}):  # a verdict against a budget not stored: unknown
        columns += [f"x{budget:g}", f"seeds x{budget:g}"] if budget in budgets else []
        low = budget / 4
        columns += [f"seeds x{budget:g} vs x{low:g}", f"gains x{budget:g} vs x{low:g}", f"tolerance x{low:g}",
                    {4.0: "converged", 16.0: "converged at x4"}.get(budget, "")]
    varying = [c for c in keys if c in ("attack", "defense") or table[c].nunique(dropna=False) > 1]
    varying.sort(key=lambda c: c != "attack")
    table = table.sort_values(varying, na_position="first")
    return table[varying + [c for c in columns if c in table] + ["attack s at x4"] * ("attack s at x4" in table)]


def _verdict_columns(verdict: Convergence, name: str) -> dict[str, object]:
    """The columns of one verdict: seeds paired, each one's gain, the tolerance and the verdict."""
    pair = f"x{verdict.larger:g} vs x{verdict.budget:g}"
    tolerances = dict.fromkeys(f"{g.tolerance:.4f}" for g in verdict.seeds)
    return {f"seeds {pair}": len(verdict.seeds),
            f"gains {pair}": ", ".join(f"s{g.seed} {g.gain:+.4f}" for g in verdict.seeds),
            f"tolerance x{verdict.budget:g}": ", ".join(tolerances), name: verdict.verdict}


def convergence_figure(long: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    long = with_attack_facts(long)  # a results.csv collected before rows recorded the headline metric
    ok = long[(long["status"] == "ok") & long["attack"].ne("none")].copy()
    ok["attack_budget"] = pd.to_numeric(ok["attack_budget"], errors="coerce").fillna(1.0)
    attacks = sorted(ok["attack"].unique())
    headlines = headline_metrics(ok)
    fig, axes = plt.subplots(1, len(attacks), figsize=(3.2 * len(attacks), 2.8), squeeze=False)
    for ax, attack in zip(axes[0], attacks):
        metric = headlines[attack]
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

    def cell(column: str, value) -> str:
        if isinstance(value, float):
            return "" if pd.isna(value) else f"{value:.0f}" if column.startswith("seeds") else f"{value:.4f}"
        return str(value)

    lines = ["| " + " | ".join(table.columns) + " |", "| " + " | ".join("---" for _ in table.columns) + " |"]
    lines += ["| " + " | ".join(cell(c, v) for c, v in zip(table.columns, row)) + " |"
              for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path)
    args = parser.parse_args()
    from bench.cli.report import load_results

    long = load_results(args.results)  # the stored table, else the cell records
    table = convergence_table(long)
    (args.results / "convergence.md").write_text(markdown(table))
    convergence_figure(long, args.results / "convergence.png")
    print(markdown(table), end="")


if __name__ == "__main__":
    main()
