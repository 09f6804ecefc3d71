"""The paper's figures from the tidy result table (seaborn/matplotlib, Agg backend; PNG and PDF).

Every function takes the tidy table (and the results folder, for the reconstruction grids) and an
output folder, and returns the paths it wrote. A figure whose data is absent is skipped: the
function calls ``on_skip`` with one line saying why (default: :func:`warnings.warn`) and returns
``[]``. Statistics come from :mod:`bench.report.aggregate`; nothing here computes its own.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from bench.report.aggregate import (  # noqa: E402
    aggregate,
    at_default_settings,
    config_fields,
    ok_rows,
    pareto_mask,
    select_profile,
    victim_fields,
    victim_view,
)
from bench.report.labels import (  # noqa: E402
    PRIVACY_DIRECTION,
    attack_label,
    defense_label,
    defense_rank,
    factor_value,
    metric_label,
)

Skip = Callable[[str], None]
# Factors that split a figure into panels when they vary (CR, λ and the defense are drawn inside).
PANEL_FIELDS = ("dataset", "victim", "cut", "protocol", "heads", "partition", "alpha", "clients")


def _warn(message: str) -> None:
    warnings.warn(message, stacklevel=3)


def save_figure(fig: plt.Figure, path: str | Path) -> None:
    """Save ``fig`` to ``path`` (its suffix names the format) without a creation date, so the same
    results give byte-identical files."""
    fig.savefig(path, dpi=150, bbox_inches="tight",
                metadata={"CreationDate": None} if Path(path).suffix == ".pdf" else None)


def _save(fig: plt.Figure, out_dir: Path, stem: str, formats: tuple[str, ...] = ("png", "pdf")) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{stem}.{ext}" for ext in formats]
    for path in paths:
        save_figure(fig, path)
    plt.close(fig)
    return paths


def _varying(frame: pd.DataFrame) -> list[str]:
    return [f for f in PANEL_FIELDS if frame[f].nunique() > 1]


def _panel_titles(frame: pd.DataFrame, varying: list[str] | None = None) -> pd.Series:
    """Per row, the values of the panel factors (default: those that vary in ``frame``)."""
    varying = _varying(frame) if varying is None else varying
    titles = [", ".join(factor_value(f, r[f]) for f in varying) for r in frame.to_dict("records")]
    return pd.Series(titles, index=frame.index, dtype=str)


def _panels(agg: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Split by the panel factors that vary; each panel titled by its values (else the dataset)."""
    titles = _panel_titles(agg)
    if titles.eq("").all():
        return [(factor_value("dataset", agg["dataset"].iloc[0]), agg)]
    return [(title, agg[titles == title]) for title in dict.fromkeys(titles)]


def _series_label(row: pd.Series) -> str:
    label = defense_label(row["defense"])
    return label + (f", λ={row['lambda_wcc']:g}" if row["lambda_wcc"] else "")


def _log2_axis(ax: plt.Axes, crs: np.ndarray) -> None:
    ax.set_xscale("log", base=2)
    ticks = sorted({float(c) for c in crs if np.isfinite(c)})
    ax.set_xticks(ticks, [f"{c:g}×" for c in ticks])
    ax.set_xlabel("compression ratio CR")


def _lines(ax: plt.Axes, data: pd.DataFrame, y: str, ci: str, scale: float = 1.0, raw_at: float | None = None) -> None:
    """One errorbar line per (defense, λ) over CR; Raw as a point at ``raw_at`` or a dashed band."""
    defended = sorted(data.loc[~data["is_raw"], "defense"].unique(), key=defense_rank)
    palette = dict(zip(defended, sns.color_palette("tab10")))
    lines = data[~data["is_raw"]]
    for label, group in (lines.groupby(lines.apply(_series_label, axis=1)) if len(lines) else ()):
        group = group.sort_values("cr")
        ax.errorbar(group["cr"], group[y] * scale, yerr=group[ci].fillna(0) * scale, marker="o", capsize=3,
                    label=label, color=palette[group["defense"].iloc[0]])
    for _, raw in data[data["is_raw"]].iterrows():
        if raw_at is not None:
            ax.errorbar([raw_at], [raw[y] * scale], yerr=[np.nan_to_num(raw[ci]) * scale], marker="s", color="k",
                        capsize=3, label=defense_label(raw["defense"]), linestyle="none")
        else:
            ax.axhline(raw[y] * scale, color="k", linestyle="--", label=defense_label(raw["defense"]))


def fig4_utility(table: pd.DataFrame, out_dir: Path, *, delta: bool = True, profile: str | None = None,
                 on_skip: Skip = _warn) -> list[Path]:
    """Fig. 4: accuracy (or Δ accuracy vs Raw, in points) over CR, one line per defense and λ_WCC."""
    agg = aggregate(victim_view(select_profile(table, profile)), metrics=["accuracy"])
    agg = agg[agg["n"] > 0]
    if agg.empty or not (~agg["is_raw"]).any():
        on_skip("fig 4 skipped: no stored accuracy of a defended cell")
        return []
    panels = _panels(agg)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 3.5), squeeze=False, layout="constrained")
    for ax, (title, data) in zip(axes[0], panels):
        if delta:
            _lines(ax, data[~data["is_raw"]], "delta", "delta_ci", 100.0)
            ax.axhline(0, color="k", linestyle="--", label="Raw")
            ax.set_ylabel("Δ accuracy vs Raw (points)")
        else:
            _lines(ax, data, "mean", "ci", 100.0)
            ax.set_ylabel("accuracy (%)")
        _log2_axis(ax, data["cr"].to_numpy())
        ax.set_title(title)
    axes[0][-1].legend(fontsize="small")
    return _save(fig, Path(out_dir), "fig4_utility")


def fig5_privacy_deltas(table: pd.DataFrame, out_dir: Path, *, attacks: list[str] | None = None,
                        metrics: tuple[str, str] = ("mse", "ssim"), profile: str | None = None,
                        on_skip: Skip = _warn) -> list[Path]:
    """Fig. 5: ΔMSE and ΔSSIM vs Raw (relative %, signed so up = more privacy) over CR, hue λ_WCC.

    One file per attack; rows are the metrics, columns the defenses (and datasets, cuts, ... when
    several).
    """
    table = select_profile(table, profile)
    agg = aggregate(at_default_settings(table[table["attack"] != "none"]), metrics=list(metrics))
    # Fig. 5 plots over CR: a defense without a CR (Raw+DP) has no point on that axis.
    agg = agg[(agg["n_pairs"] > 0) & ~agg["is_raw"] & agg["cr"].notna()]
    chosen = attacks or sorted(agg["attack"].unique())
    if not chosen:
        on_skip(f"fig 5 skipped: no defended attack cell with a matched Raw run for {', '.join(metrics)}")
    paths: list[Path] = []
    for attack in chosen:
        data = agg[agg["attack"] == attack]
        if data.empty:
            on_skip(f"fig 5 skipped for attack '{attack}': no defended cell with a matched Raw run for "
                    f"{', '.join(metrics)}")
            continue
        data = data.assign(gain=data["rel"] * data["metric"].map(PRIVACY_DIRECTION).fillna(1),
                           panel=data["defense"].map(defense_label) + (", " + _panel_titles(data)).where(_panel_titles(data) != "", ""))
        columns = list(dict.fromkeys(data.assign(_r=data["defense"].map(defense_rank)).sort_values(["_r", "dataset", "cut"])["panel"]))
        fig, axes = plt.subplots(len(metrics), len(columns), figsize=(4 * len(columns), 3 * len(metrics)), squeeze=False,
                                 layout="constrained")
        hues = dict(zip(sorted(data["lambda_wcc"].unique()), sns.color_palette("viridis", data["lambda_wcc"].nunique())))
        for i, metric in enumerate(metrics):
            for j, panel in enumerate(columns):
                ax, part = axes[i][j], data[(data["metric"] == metric) & (data["panel"] == panel)]
                for lam, line in part.groupby("lambda_wcc"):
                    line = line.sort_values("cr")
                    ax.errorbar(line["cr"], line["gain"], yerr=line["rel_ci"].fillna(0), marker="o", capsize=3,
                                color=hues[lam], label=f"λ_WCC={lam:g}")
                ax.axhline(0, color="k", linewidth=0.8)
                _log2_axis(ax, data["cr"].to_numpy())
                sign = "" if PRIVACY_DIRECTION.get(metric, 1) > 0 else "−"
                ax.set_ylabel(f"{sign}Δ{metric_label(metric).split()[0]} vs Raw (%)")
                ax.set_title(panel if i == 0 else "")
        axes[0][-1].legend(fontsize="small")
        fig.suptitle(f"{attack_label(attack)}: privacy gain vs Raw (up = more private)")
        paths += _save(fig, Path(out_dir), f"fig5_{attack}")
    return paths


def fig6_grids(table: pd.DataFrame, results_dir: Path, out_dir: Path, *, attacks: list[str] | None = None,
               profile: str | None = None, on_skip: Skip = _warn) -> list[Path]:
    """Fig. 6: the stored reconstruction grids (``<results>/grids/<cell_id>.png``: truth above,
    reconstruction below), one labelled panel per method (lowest stored seed), one figure per attack."""
    cells = ok_rows(select_profile(table, profile)).drop_duplicates("cell_id")
    cells = cells[(cells["attack"] != "none") & cells["cell_id"].map(lambda c: (Path(results_dir) / "grids" / f"{c}.png").exists())]
    if cells.empty:
        on_skip(f"fig 6 skipped: no reconstruction grid under {Path(results_dir) / 'grids'}")
        return []
    paths: list[Path] = []
    for attack in attacks or sorted(cells["attack"].unique()):
        mine = cells[cells["attack"] == attack]
        if mine.empty:
            on_skip(f"fig 6 skipped for attack '{attack}': no reconstruction grid")
            continue
        mine = mine.assign(_rank=mine["defense"].map(defense_rank)).sort_values(["_rank", "cr", "lambda_wcc", "seed"], na_position="first")
        mine = mine.drop_duplicates([f for f in config_fields(mine) if f != "attack"])
        images = [mpimg.imread(Path(results_dir) / "grids" / f"{c}.png") for c in mine["cell_id"]]
        aspect = max(im.shape[0] / im.shape[1] for im in images)
        fig, axes = plt.subplots(len(images), 1, figsize=(7, max(1.2, 7 * aspect) * len(images) + 0.5), squeeze=False, layout="constrained")
        titles = _panel_titles(mine)
        for ax, image, (index, row) in zip(axes[:, 0], images, mine.iterrows()):
            ax.imshow(image, cmap="gray", vmin=0.0, vmax=1.0) if image.ndim == 2 else ax.imshow(image)  # grey grids: one channel
            ax.set_axis_off()
            knobs = [factor_value("cr", row["cr"]), f"λ={row['lambda_wcc']:g}" if row["lambda_wcc"] else "",
                     f"[{titles[index]}]" if titles[index] else ""]
            ax.set_title(" ".join([defense_label(row["defense"]), *filter(None, knobs), f"(seed {row['seed']})"]), fontsize=9)
        fig.suptitle(f"{attack_label(attack)}: truth (top) and reconstruction (bottom)")
        # Raster pictures: a PDF would only wrap the same pixels at twice the bytes.
        paths += _save(fig, Path(out_dir), f"fig6_{attack}", formats=("png",))
    return paths


def pick_attack(table: pd.DataFrame, metric: str, attack: str | None = None) -> str | None:
    """The attack to plot ``metric`` of: ``attack`` if it has finite values; else, among the attacks
    stored for the most configurations, the strongest one: whose mean ``metric`` on the undefended
    (raw) cells leaks most (on all its cells where it has no raw cell; ties by name)."""
    rows = ok_rows(table)
    rows = rows[(rows["metric"] == metric) & np.isfinite(rows["value"]) & (rows["attack"] != "none")]
    have = set(rows["attack"])
    if attack is not None:
        return attack if attack in have else None
    if not have:
        return None
    fields = [f for f in config_fields(rows) if f != "attack"]
    coverage = rows.drop_duplicates(["attack", *fields]).groupby("attack").size()
    raw = rows[rows["defense"] == "raw"]
    leakage = -PRIVACY_DIRECTION.get(metric, 1)  # +1: a larger value leaks more
    strength = {a: leakage * (raw if (raw["attack"] == a).any() else rows).query("attack == @a")["value"].mean()
                for a in have}
    return max(sorted(have), key=lambda a: (coverage[a], strength[a]))


def fig15a_cr_sweep(table: pd.DataFrame, out_dir: Path, *, attack: str | None = None, metric: str = "ssim",
                    profile: str | None = None, on_skip: Skip = _warn) -> list[Path]:
    """Fig. 15a: accuracy and an attack's ``metric`` over every stored CR (log2 axis; Raw at 1×)."""
    table = select_profile(table, profile)
    utility = aggregate(victim_view(table), metrics=["accuracy"])
    utility = utility[utility["n"] > 0]
    if utility.empty or not (~utility["is_raw"]).any():
        on_skip("fig 15a skipped: no stored accuracy of a compressed cell")
        return []
    chosen = pick_attack(table, metric, attack)
    privacy = aggregate(at_default_settings(table[table["attack"] == chosen]), metrics=[metric]) if chosen else pd.DataFrame()
    if chosen is None:
        on_skip(f"fig 15a: no finite {metric} of {'attack ' + repr(attack) if attack else 'any attack'}; accuracy only")
    panels = _panels(utility)
    fig, axes = plt.subplots(len(panels), 2 if chosen else 1, figsize=(9 if chosen else 4.5, 3.5 * len(panels)),
                             squeeze=False, layout="constrained")
    crs = np.append(utility["cr"].to_numpy(), 1.0)
    titles = _panel_titles(privacy, _varying(utility)) if chosen else None
    for i, (title, data) in enumerate(panels):
        _lines(axes[i][0], data, "mean", "ci", 100.0, raw_at=1.0)
        axes[i][0].set(ylabel="accuracy (%)", title=title)
        if chosen:
            mine = privacy[(privacy["n"] > 0) & ((titles == title) | (len(panels) == 1))]
            _lines(axes[i][1], mine, "mean", "ci", raw_at=1.0)
            axes[i][1].set(ylabel=f"{attack_label(chosen)} {metric_label(metric)}", title=title)
        for ax in axes[i]:
            _log2_axis(ax, crs)
    axes[0][0].legend(fontsize="small")
    return _save(fig, Path(out_dir), "fig15a_cr_sweep")


def pareto_figure(table: pd.DataFrame, out_dir: Path, *, attack: str | None = None, metric: str = "ssim",
                  profile: str | None = None, on_skip: Skip = _warn) -> list[Path]:
    """:func:`draw_pareto`, saved as ``pareto.png`` and ``pareto.pdf`` under ``out_dir``."""
    fig = draw_pareto(table, attack=attack, metric=metric, profile=profile, on_skip=on_skip)
    return [] if fig is None else _save(fig, Path(out_dir), "pareto")


def draw_pareto(table: pd.DataFrame, *, attack: str | None = None, metric: str = "ssim", profile: str | None = None,
                on_skip: Skip = _warn) -> plt.Figure | None:
    """Privacy–accuracy–bytes: x bytes up per sample (log), y accuracy, colour and size the attack's
    ``metric``; Pareto-optimal configurations (more accuracy, fewer bytes, more privacy) are circled.
    None (after ``on_skip``) when no configuration has both accuracy and bytes up."""
    table = select_profile(table, profile)
    utility = aggregate(victim_view(table), metrics=["accuracy", "bytes_up_per_sample"])
    cols = victim_fields(utility)  # the privacy side is one attack's: its settings are not a victim's
    acc, up = (utility[utility["metric"] == m][cols + ["mean"]].rename(columns={"mean": m})
               for m in ("accuracy", "bytes_up_per_sample"))
    points = acc.merge(up, on=cols)
    if points.dropna(subset=["accuracy", "bytes_up_per_sample"]).empty:
        on_skip("pareto figure skipped: no stored accuracy with bytes up per sample")
        return None
    points = points.dropna(subset=["accuracy", "bytes_up_per_sample"])
    chosen = pick_attack(table, metric, attack)
    if chosen:
        privacy = aggregate(at_default_settings(table[table["attack"] == chosen]), metrics=[metric])
        points = points.merge(privacy[cols + ["mean"]].rename(columns={"mean": metric}), on=cols, how="left")
    else:
        on_skip(f"pareto figure: no finite {metric} of {'attack ' + repr(attack) if attack else 'any attack'}; accuracy and bytes only")
        points = points.assign(**{metric: np.nan})
    panels = _panels(points)
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False, layout="constrained")
    for ax, (title, data) in zip(axes[0], panels):
        _pareto_panel(fig, ax, data, metric, chosen)
        ax.set_title(title)
    return fig


def _pareto_panel(fig: plt.Figure, ax: plt.Axes, points: pd.DataFrame, metric: str, attack: str | None) -> None:
    """One Pareto scatter; the front is computed within the panel (one dataset and setting)."""
    scored = points[metric].notna()
    if scored.all():
        privacy = points[metric] * PRIVACY_DIRECTION.get(metric, 1)
        optimal = pareto_mask(points.assign(_p=privacy), maximize=["accuracy", "_p"], minimize=["bytes_up_per_sample"])
    else:  # a point without a privacy score cannot be ranked on privacy: accuracy and bytes only
        optimal = pareto_mask(points, maximize=["accuracy"], minimize=["bytes_up_per_sample"])
    x, y = points["bytes_up_per_sample"], points["accuracy"] * 100
    if scored.any():
        values = points.loc[scored, metric]
        size = 40 + 160 * (values - values.min()) / ((values.max() - values.min()) or 1)
        art = ax.scatter(x[scored], y[scored], c=values, s=size, cmap="viridis", zorder=2)
        fig.colorbar(art, ax=ax, label=f"{attack_label(attack)} {metric_label(metric)}")
    if (~scored).any():
        ax.scatter(x[~scored], y[~scored], facecolors="none", edgecolors="grey", s=60, zorder=2, label="no privacy score")
    ax.scatter(x[optimal], y[optimal], facecolors="none", edgecolors="red", s=260, linewidths=1.5, zorder=3,
               label="Pareto-optimal")
    for _, row in (points if len(points) <= 12 else points[optimal]).iterrows():  # every point, or the front
        ax.annotate(_series_label(row) + (f" {row['cr']:g}×" if np.isfinite(row["cr"]) else ""),
                    (row["bytes_up_per_sample"], row["accuracy"] * 100), fontsize=7, xytext=(4, 4), textcoords="offset points")
    ax.set_xscale("log")
    ticks = sorted(x.unique())
    if len(ticks) <= 8:  # the few payload sizes of a grid, labelled exactly
        ax.set_xticks(ticks, [f"{v:,.0f}" for v in ticks])
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set(xlabel="bytes up per sample (log)", ylabel="accuracy (%)")
    ax.legend(fontsize="small", loc="lower right")
