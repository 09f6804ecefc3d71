"""Why does NoPeek's victim sometimes stay at chance at matched bytes? Train NoPeek victims (MNIST,
MnistNet split-2, cpu profile, CR 8: a one-channel learned 1×1 code) at a few α and seeds, and follow
the code's spread over the batch (its standard deviation) step by step, beside the test accuracy.
Nothing is stored; one JSON line per victim.

    OMP_NUM_THREADS=1 python benchmarks/nopeek_code_spread.py --alphas 0,0.001,0.01 --seeds 0,1,2

dCor is scale-free, so its gradient with respect to the code grows as the code's spread shrinks;
the task's does not. A run either lets the task widen the code (it then learns) or lets dCor
flatten it to a constant (chance). See results/README.md (issue 41, NoPeek) for the measured runs.
"""
from __future__ import annotations

import argparse
import json

from bench.data.autodetect import resolve_datasets
from bench.run.cell import Cell
from bench.run.cell_runner import RunContext, run_cell
from defenses.nopeek import NoPeek
from defenses.payload import values_of

STEPS_SHOWN = (0, 20, 50, 100, 300, 600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alphas", default="0,0.001,0.01")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--cr", type=float, default=8.0)
    args = parser.parse_args()
    data_root, _ = resolve_datasets("auto", None)
    spreads: list[float] = []
    released = NoPeek.client_loss

    def watched(self, payload, y, *, inputs):
        spreads.append(float(values_of(payload).detach().std()))
        return released(self, payload, y, inputs=inputs)

    NoPeek.client_loss = watched
    try:
        for alpha in (float(a) for a in args.alphas.split(",")):
            for seed in (int(s) for s in args.seeds.split(",")):
                spreads.clear()
                cell = Cell(dataset="mnist", victim="mnistnet", cut="split-2", defense="nopeek", profile="cpu",
                            seed=seed, defense_knobs={"cr": args.cr, "nopeek_alpha": alpha}, attack="none",
                            attack_knobs={})
                metrics, _ = run_cell(cell, RunContext(data_root=data_root))
                print(json.dumps({
                    "alpha": alpha, "seed": seed, "accuracy": metrics.get("accuracy"),
                    "final_train_loss": round(metrics.get("final_train_loss"), 4),
                    "code_spread_at_step": {s: round(spreads[s], 4) for s in STEPS_SHOWN if s < len(spreads)},
                    "code_spread_last": round(spreads[-1], 6), "steps": len(spreads),
                }), flush=True)
    finally:
        NoPeek.client_loss = released


if __name__ == "__main__":
    main()
