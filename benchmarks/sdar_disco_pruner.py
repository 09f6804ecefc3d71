"""Does SDAR fail on a DISCO victim because it cannot learn the client's per-input pruning rule? Print
the client's channel usage on the targets, then rerun a stored DISCO SDAR cell with the simulator's
pruner replaced by the client's trained one, frozen (ground truth the attacker never has), every
window's networks scored on the true targets; one JSON line each. Nothing is stored.

    OMP_NUM_THREADS=1 python benchmarks/sdar_disco_pruner.py --results results/issue41-cifar10 \\
        --cells 58205c85ca9c --cache /tmp/disco-victims --windows /tmp/disco_pruner.json

The victim is trained once into ``--cache`` (by a floor cell, which also gives the targets' payloads)
and its final pruner read from there; the SDAR rerun trains the same victim again as it watches. The
attacker's copy otherwise matches only the client's channel marginals
(:meth:`~defenses.disco.Disco.align_to_observed`). ``--usage-only`` stops after the usage line. The
windows JSON holds rows as ``benchmarks/sdar_collapse_variants.py --oracle`` writes them.
"""
from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import sdar_collapse_variants as variants
import torch
from stored_sdar_cells import sdar_replaced_by, stored_cells_parser, stored_sdar_cells

from bench.data.autodetect import resolve_datasets
from bench.run.cell import Cell
from bench.run.cell_runner import RunContext, run_cell

PRUNER = "defense.client_side.pruner."


def client_usage(cell: Cell, context: RunContext) -> dict:
    """How the trained client prunes the targets: distinct kept sets, channels ever kept, usage shares."""
    seen: dict = {}
    with variants.targets_kept_in(seen):
        metrics, _ = run_cell(dataclasses.replace(cell, attack="prior", attack_knobs={}), context)
    view = seen["view"]
    kept = view.targets.payloads.indices.long()
    usage = view.server_defense.channel_usage(view.targets.payloads)
    share = usage[usage > 0] / usage.sum()
    top = usage.sort(descending=True)
    return {"accuracy": metrics.get("accuracy"), "targets": len(kept), "kept_per_target": kept.shape[1],
            "distinct_kept_sets": len({tuple(sorted(row.tolist())) for row in kept}),
            "channels_ever_kept": int((usage > 0).sum()), "usage_entropy_bits": round(float(-(share * share.log2()).sum()), 3),
            "top_usage": [(int(c), round(float(u), 3)) for u, c in zip(top.values[:8], top.indices[:8])]}


def client_pruner(cache: Path, cell: Cell) -> dict[str, torch.Tensor]:
    """The trained client's pruner state, from the newest cached checkpoint of the cell's victim."""
    path = max(cache.glob(f"{cell.victim_key}-*.pt"), key=lambda p: p.stat().st_mtime)
    state = torch.load(path, map_location="cpu", weights_only=False)["state"]
    return {k[len(PRUNER):]: v for k, v in state.items() if k.startswith(PRUNER)}


def with_client_pruner(pruner_state: dict, windows: list, truth: dict) -> type:
    """SDAR as the cell runs it (window trajectory and oracle scores kept), whose simulator at every
    (re)start takes the client's pruner and never trains it."""

    class ClientPrunerSDAR(variants.sdar_variant("released", windows, truth)):
        def _align_simulator(self, observed) -> None:
            pruner = self.nets["e"].defense.client_side.pruner
            pruner.load_state_dict(pruner_state)
            frozen = {id(p) for p in pruner.parameters()}
            for group in self.opt_e.param_groups:
                group["params"] = [p for p in group["params"] if id(p) not in frozen]

    return ClientPrunerSDAR


def main() -> None:
    parser = stored_cells_parser(__doc__, "comma list of stored SDAR cell ids on DISCO")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/disco-victims"))
    parser.add_argument("--windows", type=Path, help="JSON file for every run's window trajectory")
    parser.add_argument("--usage-only", action="store_true")
    args = parser.parse_args()
    data_root, _ = resolve_datasets("auto", None)
    # The SDAR reruns get no cache: a watched run with one would snapshot and resume across variants.
    cached, uncached = RunContext(data_root=data_root, cache_dir=args.cache), RunContext(data_root=data_root)
    trajectories = {}
    for stored, cell in stored_sdar_cells(args.results, args.cells, defense="disco"):
        print(json.dumps({"cell": cell.id, "client_usage": client_usage(cell, cached)}), flush=True)
        if args.usage_only:
            continue
        windows: list[tuple] = []
        truth: dict = {}
        started = time.perf_counter()
        with sdar_replaced_by(with_client_pruner(client_pruner(args.cache, cell), windows, truth)), variants.targets_kept_in(truth):
            metrics, _ = run_cell(cell, uncached)
        trajectories[f"{cell.id}/client-pruner"] = windows
        print(json.dumps({"cell": cell.id, "variant": "client-pruner", "stored_ssim": stored["metrics"].get("ssim"),
                          "seconds": round(time.perf_counter() - started), "best_window_ssim": max(w[7] for w in windows),
                          **{k: metrics.get(k) for k in variants.REPORTED}}), flush=True)
        if args.windows:
            args.windows.write_text(json.dumps(trajectories))


if __name__ == "__main__":
    main()
