"""How well what an SDAR attacker can see of its own run predicts how well it reconstructs.

Reads stored SDAR cells only (no training). For every stored cell of one dataset with SDAR's
diagnostics it takes three signals the server has without the targets' inputs: the MK-MMD of its
reconstructions of the observed payloads against its aux images, and of the observed payloads against
its simulator's maps, each as its excess over its floor (``sdar_image_mmd_floor``,
``sdar_payload_mmd_floor``: the same estimate between two halves of one sample; the estimator is
unbiased, so a floor can sit at or under 0 and a ratio to it would mean nothing), and
the payload critic's loss over the last window. It prints each one's Spearman correlation with SSIM
(over all defenses, then raw only) and the raw cells sorted by the image signal. Cells stored in more
than one folder count once, from the record the newest code wrote (``bench report``'s rule).

Then, where one victim was attacked by more than one SDAR variant (the same defense, CR, seed, budget
and victim accuracy, other ``moment_tie`` or ``lambda1_scale``), how much SSIM each way of choosing a
variant gives up against the best one: the variant with the lowest image signal (what an attacker
could pick), the tied one (``moment_tie`` 1) and SDAR as released (neither knob moved).

    python benchmarks/sdar_failure_signal.py --results results/issue39-sdar-cifar \\
        --results results/issue39-sdar --results results/issue13-cifar10-jpeg --dataset cifar10-jpeg
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from scipy import stats

from bench.cli.report import load_folders

SIGNALS = {"image MK-MMD - floor": ("sdar_image_mmd", "sdar_image_mmd_floor"),
           "payload MK-MMD - floor": ("sdar_payload_mmd", "sdar_payload_mmd_floor"),
           "critic loss, last window": ("sdar_e_dis_loss_window", None)}


def sdar_cells(folders: list[Path], dataset: str) -> pd.DataFrame:
    """One row per stored SDAR cell of ``dataset`` (ok status): its configuration, SSIM and the signals."""
    table = load_folders(folders)
    table = table[(table["attack"] == "sdar") & (table["dataset"] == dataset) & (table["status"] == "ok")]
    wide = table.pivot_table(index="cell_id", columns="metric", values="value", aggfunc="first", sort=False)
    knobs = ["cr", "attack_moment_tie", "attack_lambda1_scale"]
    config = table.drop_duplicates("cell_id").set_index("cell_id")[["defense", "seed", "attack_budget", *knobs]]
    cells = config.join(wide, how="inner")
    needed = ["ssim", "accuracy", *{c for pair in SIGNALS.values() for c in pair if c}]
    cells = cells.dropna(subset=[c for c in needed if c in cells])
    for name, (value, floor) in SIGNALS.items():
        cells[name] = cells[value] - cells[floor] if floor else cells[value]
    return cells


VICTIM = ["defense", "cr", "seed", "attack_budget", "victim_accuracy"]
CHOICES = {"lowest image signal": lambda g: g.loc[[g["image MK-MMD - floor"].idxmin()]],
           "tied (moment_tie 1)": lambda g: g[g["attack_moment_tie"] == 1],
           "as released": lambda g: g[(g["attack_moment_tie"] == 0) & (g["attack_lambda1_scale"] == 1)]}


def variant_choices(cells: pd.DataFrame) -> pd.DataFrame:
    """Per way of choosing among the SDAR variants stored on one victim (:data:`CHOICES`): over the
    victims where it has a candidate, how often it chose the best and the SSIM it gave up (mean, max)."""
    cells = cells.assign(victim_accuracy=cells["accuracy"].round(4))
    victims = [g for _, g in cells.groupby(VICTIM, dropna=False) if len(g) > 1]
    rows = []
    for name, choose in CHOICES.items():
        chosen = [(g, choose(g)) for g in victims]
        lost = [g["ssim"].max() - pick["ssim"].mean() for g, pick in chosen if not pick.empty]
        rows.append({"choice": name, "victims": len(lost), "best": sum(v == 0 for v in lost),
                     "mean SSIM lost": sum(lost) / len(lost) if lost else None, "max SSIM lost": max(lost, default=None)})
    return pd.DataFrame(rows).set_index("choice")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--results", type=Path, action="append", required=True)
    parser.add_argument("--dataset", default="cifar10-jpeg")
    args = parser.parse_args()
    cells = sdar_cells(args.results, args.dataset)
    raw = cells[cells["defense"] == "raw"]
    for name in SIGNALS:
        every, only_raw = stats.spearmanr(cells[name], cells["ssim"]), stats.spearmanr(raw[name], raw["ssim"])
        print(f"{name}: Spearman with SSIM {every.statistic:+.2f} (p {every.pvalue:.1g}, n {len(cells)}); "
              f"raw only {only_raw.statistic:+.2f} (p {only_raw.pvalue:.1g}, n {len(raw)})")
    shown = raw.sort_values("image MK-MMD - floor")[["seed", "attack_budget", "ssim", *SIGNALS]]
    print(shown.round(3).to_string())
    print("\nChoosing among the SDAR variants stored on one victim:")
    print(variant_choices(cells).round(3).to_string())


if __name__ == "__main__":
    main()
