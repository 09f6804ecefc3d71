"""The site's plots (matplotlib, Agg; PNG): a board's Pareto front with one defense's points marked,
and an attack's headline metric over its stored budgets."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from bench.report.aggregate import pareto_mask  # noqa: E402
from bench.report.labels import DATASET_LABELS, metric_label  # noqa: E402
from bench.site.row_labels import board_title  # noqa: E402

DPI = 110


def _save(fig: plt.Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return path


def pareto_points(board: list[dict]) -> pd.DataFrame:
    """One point per entry of a board with an accuracy and a ranking value, and whether it is
    Pareto-optimal (more accuracy, less worst-case leakage)."""
    rows = [{"entry_id": e["entry_id"], "defense": e["defense"]["name"], "label": e["defense"]["label"],
             "accuracy": e["accuracy"]["mean"], "leakage": e["ranking"]["value"], "direction": e["ranking"]["direction"]}
            for e in board if e["accuracy"]["mean"] is not None and e["ranking"]["value"] is not None]
    points = pd.DataFrame(rows, columns=["entry_id", "defense", "label", "accuracy", "leakage", "direction"])
    if points.empty:
        return points.assign(optimal=pd.Series(dtype=bool))
    privacy = points["leakage"] * points["direction"]
    return points.assign(optimal=pareto_mask(points.assign(_p=privacy), maximize=["accuracy", "_p"]))


def pareto_plot(board: list[dict], *, defense: str, path: Path) -> Path | None:
    """Accuracy against the board's worst-case metric, every entry grey, ``defense``'s in red and
    labelled, the Pareto front joined; None when no entry of the board has both values."""
    points = pareto_points(board)
    if points.empty or not (points["defense"] == defense).any():
        return None
    first = board[0]
    metric = first["ranking"]["metric"]
    fig, ax = plt.subplots(figsize=(5.2, 3.6), layout="constrained")
    front = points[points["optimal"]].sort_values("leakage")
    ax.plot(front["leakage"], front["accuracy"] * 100, color="0.6", linestyle="--", linewidth=1, label="Pareto front", zorder=1)
    others, mine = points[points["defense"] != defense], points[points["defense"] == defense]
    ax.scatter(others["leakage"], others["accuracy"] * 100, color="0.7", s=30, zorder=2, label="other defenses")
    ax.scatter(mine["leakage"], mine["accuracy"] * 100, color="tab:red", s=50, zorder=3, label=mine["label"].iloc[0].split(" (")[0])
    for _, row in mine.iterrows():
        ax.annotate(row["label"], (row["leakage"], row["accuracy"] * 100), fontsize=7, xytext=(4, 4), textcoords="offset points")
    ax.set(xlabel=f"worst-case {metric_label(metric)} (strongest attack per seed)", ylabel="accuracy (%)",
           title=board_title(first))
    ax.legend(fontsize="small")
    return _save(fig, path)


def convergence_series(entries: list[dict], attack: str) -> list[tuple[str, list[tuple[float, float, float]]]]:
    """Per entry where ``attack`` is stored at two budgets or more (its other settings alike):
    ``(label, [(budget, mean, ci), ...])`` of its headline metric, budgets ascending."""
    series = []
    for entry in entries:
        lines: dict[str, list[tuple[float, float, float]]] = {}
        for item in entry["attacks"]:
            if item["attack"] != attack:
                continue
            stat = item["metrics"].get(item["headline_metric"])
            if stat is None or stat["mean"] is None:
                continue
            others = ", ".join(f"{k}={v}" for k, v in sorted(item["settings"].items()) if k != "budget")
            lines.setdefault(others, []).append((float(item["settings"].get("budget", 1.0)), stat["mean"], stat["ci95"] or 0.0))
        for others, points in lines.items():
            if len(points) > 1:
                label = f"{DATASET_LABELS.get(entry['dataset'], entry['dataset'])}: {entry['label']}"
                series.append((label + (f" [{others}]" if others else ""), sorted(points)))
    return series


def convergence_plot(entries: list[dict], *, attack: str, metric: str, path: Path) -> Path | None:
    """The headline ``metric`` of ``attack`` over its budgets, one line per configuration; None
    where no configuration has it at two budgets."""
    series = convergence_series(entries, attack)
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(5.2, 3.4), layout="constrained")
    for label, points in series:
        budget, mean, ci = (np.array(v, dtype=float) for v in zip(*points))
        ax.errorbar(budget, mean, yerr=ci, marker="o", capsize=3, label=label)
    ax.set_xscale("log", base=2)
    budgets = sorted({b for _, points in series for b, _, _ in points})
    ax.set_xticks(budgets, [f"×{b:g}" for b in budgets])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set(xlabel="attack budget (× the profile's)", ylabel=metric_label(metric), title=f"{attack}: {metric} against budget")
    ax.legend(fontsize="x-small")
    return _save(fig, path)
