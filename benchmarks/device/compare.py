"""GPU cells beside CPU cells, from stored records alone: agreement per metric, and speed per cell type.

    python benchmarks/device/compare.py agreement --gpu results/device-agreement-mnist --cpu results/issue6-reproduction
    python benchmarks/device/compare.py speed --gpu results/device-cifar10-jpeg-table2 --cpu results/issue13-cifar10-jpeg

The device is not part of a cell's id, so a cell run on both is found in both folders under one id.
``agreement`` sets, per (defense, CR, attack, metric), the GPU cells' mean beside the CPU cells' mean
and seed spread (sample standard deviation), on the cells run on both. ``speed`` divides, per attack
and budget, the wall time of each cell run on one CPU thread by its wall time on the GPU (median of
the per-cell ratios, with the number of cells).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

UTILITY = ("accuracy",)
IMAGE = ("ssim", "lpips")


def _records(folder: Path) -> dict:
    from bench.run.store import ResultStore

    return {r.cell.id: r for r in ResultStore(folder, move_damaged=False).records() if r.status == "ok"}


def _row_key(cell) -> tuple:
    params = cell.defense_params()
    return cell.defense, params.get("cr", ""), cell.attack, cell.attack_params().get("budget", 1.0)


def agreement_rows(gpu: dict, cpu: dict) -> list[dict]:
    """Per (defense, CR, attack, budget, metric) over the cells in both: n, each side's mean, the CPU's
    standard deviation and the gap in CPU standard deviations (``None`` with fewer than 2 seeds or none)."""
    values: dict[tuple, tuple[list, list]] = defaultdict(lambda: ([], []))
    for cell_id in sorted(gpu.keys() & cpu.keys()):
        g, c = gpu[cell_id], cpu[cell_id]
        metrics = [*UTILITY, *((g.headline_metric,) if g.headline_metric else ()), *IMAGE]
        for metric in dict.fromkeys(metrics):
            if g.metrics.get(metric) is not None and c.metrics.get(metric) is not None:
                pair = values[(*_row_key(g.cell), metric)]
                pair[0].append(g.metrics[metric])
                pair[1].append(c.metrics[metric])
    rows = []
    for key, (on_gpu, on_cpu) in values.items():
        sd = statistics.stdev(on_cpu) if len(on_cpu) > 1 else None
        gap = statistics.fmean(on_gpu) - statistics.fmean(on_cpu)
        rows.append({"defense": key[0], "cr": key[1], "attack": key[2], "budget": key[3], "metric": key[4], "n": len(on_cpu),
                     "gpu": statistics.fmean(on_gpu), "cpu": statistics.fmean(on_cpu), "cpu_sd": sd,
                     "gap_in_sd": gap / sd if sd else None})
    return sorted(rows, key=lambda r: (r["defense"], str(r["cr"]), r["attack"], r["budget"], r["metric"]))


def speed_rows(gpu: dict, cpu: dict) -> list[dict]:
    """Per (attack, budget): the median over cells of CPU-thread seconds / GPU seconds, on the cells
    run on both, the CPU one on one torch thread."""
    ratios: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    for cell_id in gpu.keys() & cpu.keys():
        g, c = gpu[cell_id], cpu[cell_id]
        if c.provenance.get("torch_threads") == "1" and g.wall_seconds > 0:
            ratios[(g.cell.attack, g.cell.attack_params().get("budget", 1.0))].append((c.wall_seconds, g.wall_seconds))
    return [{"attack": attack, "budget": budget, "n": len(pairs), "cpu_s": statistics.median(c for c, _ in pairs),
             "gpu_s": statistics.median(g for _, g in pairs), "speedup": statistics.median(c / g for c, g in pairs)}
            for (attack, budget), pairs in sorted(ratios.items())]


def markdown(rows: list[dict]) -> str:
    if not rows:
        return "(no cell was run on both)\n"
    def cell(v):
        return "" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(cell(v) for v in row.values()) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("table", choices=("agreement", "speed"))
    parser.add_argument("--gpu", type=Path, required=True)
    parser.add_argument("--cpu", type=Path, required=True)
    args = parser.parse_args(argv)
    gpu, cpu = _records(args.gpu), _records(args.cpu)
    rows = agreement_rows(gpu, cpu) if args.table == "agreement" else speed_rows(gpu, cpu)
    print(markdown(rows), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
