"""Does another weight on SDAR's simulator adversarial term rescue its collapsed runs?

SDAR's simulator learns any code that the server's backbone maps to the aux labels; only the payload
discriminator's term, weighted by ``lambda1``, pulls it toward the client's code. The released code
sets ``lambda1`` per victim (0.04 for PlainNet, 0.02 for ResNet on CIFAR-10) and its authors' advice
for an unstable run is another seed or another ``lambda1`` / flip rate (research notes §7). The cpu
profile uses 0.04 / 0.1. Here stored SDAR cells are rerun with other values on the same victim
(retrained from the cell's seed) and the same attacker seed; one JSON line per run, nothing stored
(a rerun keeps the stored cell's id, so it must not land in its folder).

    OMP_NUM_THREADS=1 python benchmarks/sdar_weights.py \\
        --results results/issue13-cifar10-jpeg --cells 2e3791ec49f2 --lambda1 0.02,0.1 --flip-rate 0.1
"""
from __future__ import annotations

import json
import time
from dataclasses import replace

from stored_sdar_cells import RERUN_METRICS, sdar_replaced_by, stored_cells_parser, stored_sdar_cells

from attacks.sdar import SDAR
from attacks.sdar_config import CONFIGS
from bench.data.autodetect import resolve_datasets
from bench.run.cell_runner import RunContext, run_cell


def with_weights(lambda1: float, flip_rate: float) -> type[SDAR]:
    """SDAR with its profile's budget but ``lambda1`` and ``flip_rate`` replaced."""

    class ReweightedSDAR(SDAR):
        def __init__(self, *, profile: str, **kwargs) -> None:
            config = replace(CONFIGS[profile], lambda1=lambda1, flip_rate=flip_rate)
            super().__init__(profile=profile, **{**kwargs, "config": config})

    return ReweightedSDAR


def main() -> None:
    parser = stored_cells_parser(__doc__)
    parser.add_argument("--lambda1", required=True, help="comma list of simulator adversarial weights")
    parser.add_argument("--flip-rate", type=float, default=None, help="label flip rate (default: the profile's)")
    args = parser.parse_args()
    data_root, _ = resolve_datasets("auto", None)
    for stored, cell in stored_sdar_cells(args.results, args.cells):
        flip = CONFIGS[cell.profile].flip_rate if args.flip_rate is None else args.flip_rate
        for lambda1 in (float(v) for v in args.lambda1.split(",")):
            started = time.perf_counter()
            with sdar_replaced_by(with_weights(lambda1, flip)):
                metrics, _ = run_cell(cell, RunContext(data_root=data_root))
            print(json.dumps({
                "cell": cell.id, "label": cell.label(), "lambda1": lambda1, "flip_rate": flip,
                "stored_ssim": stored["metrics"].get("ssim"), "seconds": round(time.perf_counter() - started),
                **{k: metrics.get(k) for k in RERUN_METRICS},
            }), flush=True)


if __name__ == "__main__":
    main()
