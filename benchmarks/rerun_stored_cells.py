"""Rerun stored cells from a clean cache and compare every metric with the stored one, exactly.

    python benchmarks/rerun_stored_cells.py --results results/issue6-reproduction \\
        --cells 09f512b57c2a,1fc2bf6439f7 --out /tmp/rerun

Each cell runs in this process with the torch thread count its record names, in a fresh output
folder (no cached victim). Wall-clock metrics (``*_seconds``, ``*_ms``) are listed but not compared.
Exits 1 when any other metric differs from the stored value.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import torch

from bench.data.autodetect import resolve_datasets
from bench.run.cell import Cell
from bench.run.cell_runner import RunContext, execute_cell

TIMINGS = ("_seconds", "_ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--cells", required=True, help="comma list of stored cell ids")
    parser.add_argument("--out", type=Path, required=True, help="a fresh folder for the rerun's checkpoints")
    args = parser.parse_args()
    data_root, _ = resolve_datasets("auto", None)
    differ = 0
    for cell_id in args.cells.split(","):
        stored = json.loads((args.results / "cells" / f"{cell_id}.json").read_text())
        cell = Cell.from_dict(stored["cell"])
        assert cell.id == cell_id, (cell.id, cell_id)
        torch.set_num_threads(int(stored["provenance"]["torch_threads"]))
        ctx = RunContext(data_root=data_root, cache_dir=args.out / cell_id / "checkpoints")
        record = execute_cell(cell, ctx)
        if record.status != "ok":
            print(record.error)
            return 1
        compared = same = 0
        for name, old in sorted(stored["metrics"].items()):
            new = record.metrics.get(name)
            if name.endswith(TIMINGS):
                continue
            compared += 1
            equal = (old is None and (new is None or math.isnan(new))) or (old is not None and new == old)
            same += equal
            if not equal:
                print(f"  {cell_id} {name}: stored {old!r}, rerun {new!r}")
        differ += compared - same
        label = f"{cell.attack} on {cell.label()}"
        print(f"{cell_id} ({label}, {stored['provenance']['torch_threads']} thread, stored by "
              f"{stored['provenance']['code_version']}): {same}/{compared} metrics identical, "
              f"{record.wall_seconds:.0f} s")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
