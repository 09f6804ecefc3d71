"""Does SDAR need DISCO's channel usage to start its simulator? Run SDAR cells on DISCO victims with
the attacker's copy aligned to the client's channel usage (``Disco.align_to_observed``: the kept
channels' indices are on the wire) and, with ``--variants off,on``, without it (the base no-op). One
JSON line per run; nothing is stored. The victim is trained once into ``--cache`` and reused.

    OMP_NUM_THREADS=1 python benchmarks/disco_alignment.py --seeds 2 --budget 4 --variants on

On MNIST (cpu profile, DISCO CR 8, α 0.5, proxy 32 wide × 2 blocks) the trained clients of seeds 0
and 2 keep channel 7 for every input (scores 0.93-0.97 against -0.50 to -0.21 for the others); a
fresh copy's random pruner spreads its choice over the channels. results/README.md (issue 41, DISCO)
gives the runs.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench.data.autodetect import resolve_datasets
from bench.run.cell import Cell
from bench.run.cell_runner import RunContext, run_cell
from defenses.base import Defense
from defenses.disco import Disco

REPORTED = ("accuracy", "ssim", "lpips", "sdar_collapsed", "sdar_restarts", "sdar_restarted_at", "sdar_payload_mmd",
            "sdar_payload_mmd_floor", "sdar_e_dis_loss_window", "sdar_label_acc")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="2")
    parser.add_argument("--budget", type=float, default=4.0)
    parser.add_argument("--variants", default="off,on", help="off: no alignment (the base no-op); on: DISCO's own")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/disco-alignment-victims"))
    args = parser.parse_args()
    data_root, _ = resolve_datasets("auto", None)
    context = RunContext(data_root=data_root, cache_dir=args.cache)
    released = Disco.align_to_observed
    try:
        for seed in (int(s) for s in args.seeds.split(",")):
            cell = Cell(dataset="mnist", victim="mnistnet", cut="split-2", defense="disco", profile="cpu", seed=seed,
                        defense_knobs={"cr": 8.0, "disco_alpha": 0.5, "proxy_width": 32, "proxy_blocks": 2},
                        attack="sdar", attack_knobs={"budget": args.budget})
            for variant in args.variants.split(","):
                Disco.align_to_observed = released if variant == "on" else Defense.align_to_observed
                started = time.perf_counter()
                metrics, _ = run_cell(cell, context)
                print(json.dumps({"cell": cell.label(), "aligned": variant == "on", "seconds": round(time.perf_counter() - started),
                                  **{k: metrics.get(k) for k in REPORTED}}), flush=True)
    finally:
        Disco.align_to_observed = released


if __name__ == "__main__":
    main()
