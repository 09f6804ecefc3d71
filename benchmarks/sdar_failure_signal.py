"""How well what an SDAR attacker can see of its own run predicts how well it reconstructs.

Reads stored SDAR cells only (no training). For every stored cell of one dataset with SDAR's
diagnostics it takes three signals the server has without the targets' inputs: the MK-MMD of its
reconstructions of the observed payloads against its aux images, and of the observed payloads against
its simulator's maps, each as its excess over its floor (``sdar_image_mmd_floor``,
``sdar_payload_mmd_floor``: the same estimate between two halves of one sample; the estimator is
unbiased, so a floor can sit at or under 0 and a ratio to it would mean nothing), and
the payload critic's loss over the last window. It prints each one's Spearman correlation with SSIM
(over all defenses, then raw only) and the raw cells sorted by the image signal. Cells stored in more
than one folder count once (by cell id, the first folder given wins).

    python benchmarks/sdar_failure_signal.py --results results/issue39-sdar-cifar \\
        --results results/issue39-sdar --results results/issue13-cifar10-jpeg --dataset cifar10-jpeg
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from scipy import stats

from bench.cli.report import load_results

SIGNALS = {"image MK-MMD - floor": ("sdar_image_mmd", "sdar_image_mmd_floor"),
           "payload MK-MMD - floor": ("sdar_payload_mmd", "sdar_payload_mmd_floor"),
           "critic loss, last window": ("sdar_e_dis_loss_window", None)}


def sdar_cells(folders: list[Path], dataset: str) -> pd.DataFrame:
    """One row per stored SDAR cell of ``dataset`` (ok status): its configuration, SSIM and the signals."""
    tables = [load_results(f) for f in folders]
    table = pd.concat(tables, ignore_index=True)
    table = table[(table["attack"] == "sdar") & (table["dataset"] == dataset) & (table["status"] == "ok")]
    wide = table.pivot_table(index="cell_id", columns="metric", values="value", aggfunc="first", sort=False)
    config = table.drop_duplicates("cell_id").set_index("cell_id")[["defense", "seed", "attack_budget"]]
    cells = config.join(wide, how="inner")
    needed = ["ssim", *{c for pair in SIGNALS.values() for c in pair if c}]
    cells = cells.dropna(subset=[c for c in needed if c in cells])
    for name, (value, floor) in SIGNALS.items():
        cells[name] = cells[value] - cells[floor] if floor else cells[value]
    return cells


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


if __name__ == "__main__":
    main()
