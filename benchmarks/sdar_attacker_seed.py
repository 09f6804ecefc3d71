"""Does an SDAR run collapse because of its victim or of its attacker? Rerun stored SDAR cells with
other attacker seeds on the same victim (retrained here from the cell's seed) and print one JSON
line per run. Nothing is stored: the cell id stays the stored one's, so a rerun must not land in
its folder.

    OMP_NUM_THREADS=1 python benchmarks/sdar_attacker_seed.py \\
        --results results/issue13-cifar10-jpeg --cells 2e3791ec49f2,32a342e8437c --attacker-seeds 0,1,2

A cell's attack is built with the cell's seed (:func:`bench.run.attack_cell.run_attack_cell`), so
the victim and the attacker share it; here the registry hands the cell runner an SDAR whose seed is
replaced, and everything else (victim training, data carving, scoring) runs as in the grid.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from stored_sdar_cells import RERUN_METRICS, sdar_replaced_by, stored_cells_parser, stored_sdar_cells

from attacks.sdar import SDAR
from bench.data.autodetect import resolve_datasets
from bench.run.cell import Cell
from bench.run.cell_runner import RunContext, run_cell


def with_attacker_seed(seed: int) -> type[SDAR]:
    """SDAR whose own seed is ``seed`` whatever the cell passes."""

    class ReseededSDAR(SDAR):
        def __init__(self, **kwargs) -> None:
            super().__init__(**{**kwargs, "seed": seed})

    return ReseededSDAR


def run_with_attacker_seed(cell: Cell, seed: int, data_root: Path) -> dict:
    """The cell's metrics when its SDAR is built with attacker seed ``seed``."""
    with sdar_replaced_by(with_attacker_seed(seed)):
        metrics, _ = run_cell(cell, RunContext(data_root=data_root))
    return metrics


def main() -> None:
    parser = stored_cells_parser(__doc__)
    parser.add_argument("--attacker-seeds", required=True, help="comma list of attacker seeds")
    args = parser.parse_args()
    data_root, _ = resolve_datasets("auto", None)
    for stored, cell in stored_sdar_cells(args.results, args.cells):
        for seed in (int(s) for s in args.attacker_seeds.split(",")):
            started = time.perf_counter()
            metrics = run_with_attacker_seed(cell, seed, data_root)
            print(json.dumps({
                "cell": cell.id, "label": cell.label(), "victim_seed": cell.seed, "attacker_seed": seed,
                "stored_ssim": stored["metrics"].get("ssim"), "seconds": round(time.perf_counter() - started),
                **{k: metrics.get(k) for k in RERUN_METRICS},
            }), flush=True)


if __name__ == "__main__":
    main()
