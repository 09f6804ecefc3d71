"""How should an attacker simulate DISCO's client? Run one SDAR cell on a DISCO victim twice: with the
simulator's DISCO straight-through (as for top-K: the kept values, identity gradient, the gates
detached, so the simulator's own pruner never trains), and with DISCO's differentiable forward (the
gates carry the gradient to the pruner; what ``Disco.straight_through = False`` makes every attacker
use). One JSON line per run; nothing is stored.

    OMP_NUM_THREADS=1 python benchmarks/disco_simulator.py --seed 1 --budget 1

Measured on MNIST (cpu profile, DISCO CR 8, α 0.5, proxy 32 wide × 2 blocks, seed 1, SDAR ×1; Intel
Xeon, 2026-12-06; the same cell run through ``run_attack_cell`` on the grid's stored victim):
straight-through SSIM 0.002 (2 restarts, payload MMD 3.12 against its floor 0.012); differentiable
0.782 (no restart, payload MMD 0.044).
"""
from __future__ import annotations

import argparse
import json
import time

from bench.data.autodetect import resolve_datasets
from bench.run.cell import Cell
from bench.run.cell_runner import RunContext, run_cell
from defenses.disco import Disco

REPORTED = ("accuracy", "ssim", "lpips", "sdar_collapsed", "sdar_restarts", "sdar_payload_mmd", "sdar_payload_mmd_floor",
            "sdar_e_dis_loss")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--dataset", default="mnist")
    args = parser.parse_args()
    data_root, _ = resolve_datasets("auto", None)
    cell = Cell(dataset=args.dataset, victim="mnistnet", cut="split-2", defense="disco", profile="cpu", seed=args.seed,
                defense_knobs={"cr": 8.0, "disco_alpha": 0.5, "proxy_width": 32, "proxy_blocks": 2},
                attack="sdar", attack_knobs={"budget": args.budget})
    released = Disco.straight_through
    try:
        for straight_through in (True, False):
            Disco.straight_through = straight_through
            started = time.perf_counter()
            metrics, _ = run_cell(cell, RunContext(data_root=data_root))
            print(json.dumps({"cell": cell.label(), "straight_through": straight_through,
                              "seconds": round(time.perf_counter() - started), **{k: metrics.get(k) for k in REPORTED}}),
                  flush=True)
    finally:
        Disco.straight_through = released


if __name__ == "__main__":
    main()
