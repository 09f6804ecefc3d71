"""Fig. 9's analogue: perplexity inflation over Raw against CR, one line per model size and defense."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from bench.report.aggregate import aggregate, select_profile, victim_view  # noqa: E402
from bench.report.figures import Skip, _log2_axis, _save, _warn  # noqa: E402
from bench.report.labels import defense_label, defense_rank, factor_value  # noqa: E402


def fig9_perplexity_inflation(table: pd.DataFrame, out_dir: Path, *, profile: str | None = None,
                              on_skip: Skip = _warn) -> list[Path]:
    """Perplexity inflation (best evaluation perplexity / matched Raw's) over CR, mean ± 95% CI over
    seeds: one panel per dataset, one colour per defense, one marker and line style per size (cut)."""
    agg = aggregate(victim_view(select_profile(table, profile)), metrics=["perplexity_inflation"])
    agg = agg[(agg["n"] > 0) & ~agg["is_raw"]]
    if agg.empty:
        on_skip("fig 9 skipped: no stored perplexity inflation of a defended cell")
        return []
    datasets = list(dict.fromkeys(agg["dataset"]))
    fig, axes = plt.subplots(1, len(datasets), figsize=(5 * len(datasets), 3.6), squeeze=False, layout="constrained")
    defenses = sorted(agg["defense"].unique(), key=defense_rank)
    colours = dict(zip(defenses, sns.color_palette("tab10")))
    cuts = list(dict.fromkeys(agg.sort_values("cut")["cut"]))
    styles = dict(zip(cuts, [("o", "-"), ("s", "--"), ("^", ":"), ("D", "-."), ("v", "-"), ("P", "--"), ("X", ":")]))
    for ax, dataset in zip(axes[0], datasets):
        data = agg[agg["dataset"] == dataset]
        for (cut, defense), group in data.groupby(["cut", "defense"], sort=False):
            group = group.sort_values("cr")
            marker, line = styles[cut]
            ax.errorbar(group["cr"], group["mean"], yerr=group["ci"].fillna(0), marker=marker, linestyle=line,
                        capsize=3, color=colours[defense], label=f"{defense_label(defense)}, {cut}")
        ax.axhline(1.0, color="k", linestyle="--", linewidth=1, label="Raw")
        _log2_axis(ax, data["cr"].to_numpy())
        ax.set_ylabel("perplexity inflation (× Raw)")
        ax.set_title(factor_value("dataset", dataset))
    axes[0][-1].legend(fontsize="small")
    return _save(fig, Path(out_dir), "fig9_perplexity_inflation")
