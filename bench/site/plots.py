"""The site's plots (matplotlib, Agg; PNG).

- :func:`pareto_plot`: a board's accuracy against its worst-case leakage, one panel per bytes group
  (the groups :mod:`bench.site.ranking` ranks rows in: rows that measurably send the same bytes per
  sample) where the defense has a row, every row of the group with its 95% CIs as error bars, the
  defense's in red, the group's Pareto front joined over its ranked rows (a row with a victim at
  chance is drawn hollow and never on the front), and each point named in a column beside the
  panel (labels spread apart so none overlaps another, each joined to its point by a thin line).
- :func:`convergence_plot`: an attack's headline metric over its stored budgets as small multiples,
  one panel per configuration on shared axes, each titled with its configuration (no legend).
"""
from __future__ import annotations

import itertools
import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import ConnectionPatch  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from bench.report.aggregate import pareto_mask  # noqa: E402
from bench.report.labels import DATASET_LABELS, METRIC_RANGES, base_metric, metric_label  # noqa: E402
from bench.site.ranking import group_of  # noqa: E402
from bench.site.row_labels import board_title  # noqa: E402

DPI = 110
MINE, OTHERS, FRONT = "tab:red", "0.55", "0.45"
LABEL_POINTS = 7.0  # font size of the point labels beside a Pareto panel
UNRANKED = " · unranked: victim at chance"  # after the label of a hollow point
PANEL_COLUMNS = 4  # convergence panels per row
PANEL_INCHES = (2.75, 2.05)  # a convergence panel with its share of the gaps (width, height)
GAP_INCHES = (0.4, 0.65)  # between convergence panels: y tick labels; x tick labels and a 3-line title
# Around them: the figure's axis labels, and at the top its title above the top panels' titles.
MARGIN_INCHES = {"left": 0.6, "right": 0.15, "bottom": 0.55, "top": 0.9}
TITLE_INCHES = 0.15  # the figure's title below the top edge


def _save(fig: plt.Figure, path: Path, *, crop: bool = True) -> Path:
    """Write ``fig`` as a PNG, cropped to what it draws (``crop``: a second layout pass) or whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight" if crop else None)
    plt.close(fig)
    return path


def _ci(stat: dict | None) -> float:
    value = (stat or {}).get("ci95")
    return float(value) if value is not None and math.isfinite(value) else 0.0


def pareto_points(board: list[dict]) -> pd.DataFrame:
    """One point per entry of a board with an accuracy and a ranking value: its means and 95% CIs,
    its bytes group (:func:`bench.site.ranking.group_of`), whether it is ranked
    (:func:`bench.site.ranking.rank_entries`) and whether it is Pareto-optimal among the ranked
    points of that group (more accuracy, less worst-case leakage): a victim at chance on some seed
    mixes a model that learned nothing into its means, so it never sets the front."""
    rows = []
    for e in board:
        if e["accuracy"]["mean"] is None or e["ranking"]["value"] is None:
            continue
        worst = e["worst_case"].get(e["ranking"]["metric"], {}).get("stat")
        rows.append({"entry_id": e["entry_id"], "defense": e["defense"]["name"], "label": e["defense"]["label"],
                     "accuracy": e["accuracy"]["mean"], "accuracy_ci": _ci(e["accuracy"]),
                     "leakage": e["ranking"]["value"], "leakage_ci": _ci(worst), "direction": e["ranking"]["direction"],
                     "group": group_of(e), "group_text": group_text(e), "ranked": bool(e["ranking"]["ranked"])})
    columns = ["entry_id", "defense", "label", "accuracy", "accuracy_ci", "leakage", "leakage_ci", "direction", "group",
               "group_text", "ranked"]
    points = pd.DataFrame(rows, columns=columns)
    if points.empty:
        return points.assign(optimal=pd.Series(dtype=bool))
    optimal = pd.Series(False, index=points.index)
    for _, members in points[points["ranked"]].groupby("group", sort=False):
        privacy = members["leakage"] * members["direction"]
        optimal[members.index] = pareto_mask(members.assign(_p=privacy), maximize=["accuracy", "_p"])
    return points.assign(optimal=optimal)


def group_text(entry: dict) -> str:
    """``measured CR 8×`` (``uncompressed`` for the board's reference bytes; the exact bytes where the
    board has no uncompressed row)."""
    group = entry["bytes_group"]
    if group["group_cr"] is not None:
        return "uncompressed (measured CR 1×)" if group["group_cr"] == 1 else f"measured CR {group['group_cr']:g}×"
    return f"{group['bytes']:,.0f} B per sample" if group["bytes"] is not None else "bytes not measured"


def _limits(means: np.ndarray, cis: np.ndarray, *, floor_span: float, bounds: tuple[float, float] | None = None,
            scale: float = 1.0) -> tuple[float, float]:
    """Axis limits that show every mean and its CI, except that an interval far wider than the spread
    of the means (an unstable seed) is cut at 0.6 of that spread beyond the outermost means, and none
    reaches past the metric's whole range (``bounds``, times ``scale``) by more than a margin."""
    lo, hi = float(np.min(means)), float(np.max(means))
    span = max(hi - lo, floor_span)
    low = max(float(np.min(means - cis)), lo - 0.6 * span)
    high = min(float(np.max(means + cis)), hi + 0.6 * span)
    if bounds is not None:
        low, high = max(low, bounds[0] * scale), min(high, bounds[1] * scale)
    pad = 0.06 * max(high - low, floor_span)
    return low - pad, high + pad


def _bounds(metric: str | None) -> tuple[float, float] | None:
    return METRIC_RANGES.get(metric, METRIC_RANGES.get(base_metric(metric))) if metric else None


def spread(positions: list[float], gap: float, low: float, high: float) -> list[float]:
    """Label positions: ``positions`` in the same order, each at least ``gap`` above the one below it,
    moved only as far as that needs, inside ``[low, high]`` where they fit (where they do not, they
    start at ``low`` and run past ``high``)."""
    order = sorted(range(len(positions)), key=lambda i: positions[i])
    placed = [min(max(positions[i], low), high) for i in order]
    for k in range(1, len(placed)):  # up: no label closer than gap to the one below it
        placed[k] = max(placed[k], placed[k - 1] + gap)
    if placed and placed[-1] > high:  # past the top: pull down from the top, then push up again from the bottom
        placed[-1] = high
        for k in range(len(placed) - 2, -1, -1):
            placed[k] = min(placed[k], placed[k + 1] - gap)
        placed[0] = max(placed[0], low)
        for k in range(1, len(placed)):
            placed[k] = max(placed[k], placed[k - 1] + gap)
    result = [0.0] * len(positions)
    for k, i in enumerate(order):
        result[i] = placed[k]
    return result


def pareto_plot(board: list[dict], *, defense: str, path: Path) -> Path | None:
    """Accuracy against the board's worst-case metric, one panel per bytes group where ``defense`` has
    a row (most bytes first), on shared axes: means with 95% CIs as error bars (an interval much wider
    than the spread of the means is cut at the panel's edge), ``defense``'s rows in red, the others
    grey, the group's Pareto front dashed, every point named beside the panel; None when no entry of
    ``defense`` on the board has both values."""
    points = pareto_points(board)
    if points.empty or not (points["defense"] == defense).any():
        return None
    first = board[0]
    metric = first["ranking"]["metric"]
    groups = sorted(points.loc[points["defense"] == defense, "group"].unique())
    shown = points[points["group"].isin(groups)]
    xlim = _limits(shown["leakage"].to_numpy(float), shown["leakage_ci"].to_numpy(float), floor_span=0.05, bounds=_bounds(metric))
    ylim = _limits(shown["accuracy"].to_numpy(float) * 100, shown["accuracy_ci"].to_numpy(float) * 100, floor_span=2.0,
                   bounds=(0.0, 1.0), scale=100.0)
    line = LABEL_POINTS * 1.35 / 72  # inches per label line
    heights = [max(2.3, 0.35 + line * (points["group"] == g).sum() * 1.1) for g in groups]
    fig = plt.figure(figsize=(8.2, sum(heights) + 0.9))
    grid = fig.add_gridspec(len(groups), 2, width_ratios=[3.0, 2.2], height_ratios=heights, wspace=0.02, hspace=0.3,
                            left=0.09, right=0.99, top=1 - 0.55 / (sum(heights) + 0.9), bottom=0.5 / (sum(heights) + 0.9))
    axes = []
    defense_text = points.loc[points["defense"] == defense, "label"].iloc[0].split(" (")[0]
    for row, group in enumerate(groups):
        ax = fig.add_subplot(grid[row, 0], sharex=axes[0] if axes else None, sharey=axes[0] if axes else None)
        names = fig.add_subplot(grid[row, 1], sharey=ax)
        names.set_axis_off()
        names.set_xlim(0, 1)
        axes.append(ax)
        mine_group = points[points["group"] == group]
        front = mine_group[mine_group["optimal"]].sort_values("leakage")
        ax.plot(front["leakage"], front["accuracy"] * 100, color=FRONT, linestyle="--", linewidth=1, zorder=1)
        for (is_mine, colour, size), ranked in itertools.product(((False, OTHERS, 4), (True, MINE, 5.5)), (True, False)):
            part = mine_group[((mine_group["defense"] == defense) == is_mine) & (mine_group["ranked"] == ranked)]
            if not part.empty:
                ax.errorbar(part["leakage"], part["accuracy"] * 100, xerr=part["leakage_ci"], yerr=part["accuracy_ci"] * 100,
                            fmt="o", color=colour, markersize=size, elinewidth=0.8, capsize=2, zorder=3 if is_mine else 2,
                            markerfacecolor=colour if ranked else "white")
        ax.set(xlim=xlim, ylim=ylim)
        ax.set_title(mine_group["group_text"].iloc[0], fontsize=9, loc="left")
        ax.tick_params(labelsize=8)
        ax.grid(alpha=0.25, linewidth=0.5)
        ax.set_ylabel("accuracy (%)", fontsize=8)
        # labels: beside the panel, spread at least one line apart, each joined to its point
        panel_height = heights[row]
        gap = (ylim[1] - ylim[0]) * line * 1.05 / panel_height
        ordered = mine_group.sort_values("accuracy")
        anchors = [min(max(a * 100, ylim[0]), ylim[1]) for a in ordered["accuracy"]]
        placed = spread(anchors, gap, ylim[0] + gap / 2, ylim[1] - gap / 2)
        for (_, point), y in zip(ordered.iterrows(), placed):
            is_mine = point["defense"] == defense
            names.text(0.06, y, point["label"] + ("" if point["ranked"] else UNRANKED), fontsize=LABEL_POINTS, va="center", ha="left",
                       color=MINE if is_mine else "0.25", fontweight="bold" if is_mine else "normal")
            x = min(max(point["leakage"], xlim[0]), xlim[1])
            fig.add_artist(ConnectionPatch((x, min(max(point["accuracy"] * 100, ylim[0]), ylim[1])), (0.05, y),
                                           coordsA=ax.transData, coordsB=names.transData, color=MINE if is_mine else "0.6",
                                           linewidth=0.5, linestyle=":", alpha=0.8, zorder=5))
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    axes[-1].set_xlabel(f"worst-case {metric_label(metric)} (strongest attack per seed; mean ± 95% CI)", fontsize=8)
    fig.suptitle(f"{board_title(first)}: {defense_text} in red, other defenses grey, each bytes group's Pareto front dashed",
                 fontsize=9, x=0.01, ha="left")
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
    """The headline ``metric`` of ``attack`` over its budgets as small multiples: one panel per
    configuration (titled with it), shared axes, mean ± 95% CI per budget (an interval much wider
    than the spread of the means is cut at the panel's edge); None where no configuration has it at
    two budgets."""
    series = convergence_series(entries, attack)
    if not series:
        return None
    columns = min(PANEL_COLUMNS, len(series))
    rows = math.ceil(len(series) / columns)
    # Fixed margins, and limits and ticks set on every panel rather than shared: constrained layout and
    # matplotlib's shared axes cost time that grows with the panels (20 s for 80 of them).
    margin = MARGIN_INCHES
    width = PANEL_INCHES[0] * columns + margin["left"] + margin["right"]
    height = PANEL_INCHES[1] * rows + margin["bottom"] + margin["top"]
    axis_width, axis_height = PANEL_INCHES[0] - GAP_INCHES[0], PANEL_INCHES[1] - GAP_INCHES[1]
    fig, axes = plt.subplots(rows, columns, figsize=(width, height), squeeze=False, gridspec_kw={
        "left": margin["left"] / width, "right": 1 - margin["right"] / width,
        "bottom": margin["bottom"] / height, "top": 1 - margin["top"] / height,
        "wspace": GAP_INCHES[0] / axis_width, "hspace": GAP_INCHES[1] / axis_height})
    every = [p for _, points in series for p in points]
    means, cis = np.array([m for _, m, _ in every], float), np.array([c for _, _, c in every], float)
    ylim = _limits(means, cis, floor_span=0.05, bounds=_bounds(metric))
    budgets = sorted({b for b, _, _ in every})
    xlim = (budgets[0] / 1.25, budgets[-1] * 1.25)
    for index, (label, points) in enumerate(series):
        ax = axes[index // columns][index % columns]
        budget, mean, ci = (np.array(v, dtype=float) for v in zip(*points))
        ax.axvline(1.0, color="0.85", linewidth=0.8, zorder=0)
        ax.errorbar(budget, mean, yerr=ci, marker="o", markersize=4, capsize=2, linewidth=1.2, color="tab:blue")
        ax.set_title("\n".join(textwrap.wrap(label, 38)[:3]), fontsize=7, loc="left")
        ax.set_xscale("log", base=2)
        ax.set_xticks(budgets, [f"×{b:g}" for b in budgets])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlim(*xlim)
        ax.set_ylim(*ylim)
        ax.grid(alpha=0.25, linewidth=0.5)
        ax.tick_params(labelsize=7, labelleft=index % columns == 0,
                       labelbottom=index + columns >= len(series))  # x labels under the lowest panel of each column
    for index in range(len(series), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    fig.supxlabel("attack budget (× the profile's; the grey line is ×1)", fontsize=8)
    fig.supylabel(f"{metric_label(metric)} (mean ± 95% CI)", fontsize=8)
    fig.suptitle(f"{attack}: {metric} against budget, one panel per configuration", fontsize=9, y=1 - TITLE_INCHES / height, va="top")
    return _save(fig, path, crop=False)  # its margins hold every label already: cropping would only lay it out twice
