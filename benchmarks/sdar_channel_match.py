"""Does SDAR's simulator land on the client's code channel for channel, and is the image still there?

SDAR decodes the client's cut maps with a decoder trained on its simulator's maps, so it needs the
simulator's channel ``k`` to carry what the client's channel ``k`` carries. The frozen backbone and
the payload discriminator are all that tie them. This rerun of a stored SDAR cell (victim and attacker
retrained from the cell's seeds) reads, with the targets' true images, which only the benchmark holds:

* ``sim_ssim``: the decoder on the simulator's maps of the target images (how well it reads its own
  simulator's code);
* ``channel_corr_median``: per channel, the correlation of the client's and the simulator's maps of
  the same target images, over images and positions; the median over channels;
* ``own_channel_best``: the share of client channels whose best-correlated simulator channel is
  their own;
* ``oracle_remap_ssim``: the decoder on the client's maps after a least-squares 1×1 map (channels
  and a bias, the same at every position) onto the simulator's maps of the same images, fitted on
  the first half of the targets and scored on the second; ``plain_half_ssim``: the same half decoded
  without it. An upper bound on what a channel remap could give an attacker, not an attack: it uses
  paired targets.

The channel readings mean what they say where the cut map keeps the victim's channels (raw, top-K's
dense map, learned 1×1's server output). Under a projection defense both cut maps are the payload
lifted by the same public ``R``, so each channel is the same fixed mix of the payload's coordinates:
the channel readings say little there, and a 1×1 remap cannot express a mismatch among those
coordinates; ``sim_ssim`` still applies.

One JSON line per stored cell (its ``ssim`` and ``accuracy`` must match the stored ones, else the
machine did not reproduce the cell); nothing is stored.

    OMP_NUM_THREADS=1 python benchmarks/sdar_channel_match.py \\
        --results results/issue13-cifar10-jpeg --cells 2e3791ec49f2,32a342e8437c
"""
from __future__ import annotations

import json
import time
from unittest import mock

import torch
from stored_sdar_cells import sdar_replaced_by, stored_cells_parser, stored_sdar_cells
from torch import Tensor

import bench.run.attack_cell as attack_cell
from attacks.sdar import SDAR
from bench.data.autodetect import resolve_datasets
from bench.metrics import image_metrics
from bench.run.cell_runner import RunContext, run_cell

BATCH = 500


def pixel_rows(maps: Tensor) -> Tensor:
    """``(N, C, H, W)`` maps as ``(N·H·W, C)`` rows, one per image and position."""
    return maps.permute(0, 2, 3, 1).reshape(-1, maps.shape[1])


def channel_correlation(client: Tensor, simulator: Tensor) -> Tensor:
    """``(C, C)`` correlations of every client channel with every simulator channel, ``(N, C, H, W)`` maps."""
    a, b = ((m - m.mean(0)) / m.std(0, correction=0).clamp_min(1e-8) for m in map(pixel_rows, (client, simulator)))
    return a.T @ b / len(a)


def _with_bias(rows: Tensor) -> Tensor:
    return torch.cat([rows, torch.ones(len(rows), 1)], 1)


def least_squares_remap(source: Tensor, target: Tensor) -> Tensor:
    """``(C + 1, C)`` weights of the 1×1 map (with bias) taking ``source`` maps closest to ``target``'s."""
    return torch.linalg.lstsq(_with_bias(pixel_rows(source)), pixel_rows(target)).solution


def apply_remap(weights: Tensor, maps: Tensor) -> Tensor:
    """``maps`` through the 1×1 map of :func:`least_squares_remap`."""
    n, _, h, w = maps.shape
    return (_with_bias(pixel_rows(maps)) @ weights).reshape(n, h, w, -1).permute(0, 3, 1, 2)


@torch.no_grad()
def channel_match(attack: SDAR, truth: Tensor) -> dict[str, float]:
    """The diagnostics above for a trained SDAR attack (unconditional decoder) and its targets' images."""
    nets, cut_map = attack.nets.eval(), attack.view.cut_map
    if attack.conditional:
        raise SystemExit("sdar_channel_match: only U-shaped (unconditional) SDAR cells")
    decode = lambda maps: torch.cat([nets["d"](maps[i:i + BATCH], None) for i in range(0, len(maps), BATCH)])  # noqa: E731
    ssim = lambda maps, x: image_metrics(decode(maps).clamp(0, 1), x, masked=False)[0]["ssim"]  # noqa: E731
    client = cut_map(attack.view.targets.payloads)
    if client.dim() != 4:
        raise SystemExit(f"sdar_channel_match: needs (C, H, W) cut maps, got {tuple(client.shape[1:])}")
    simulator = cut_map(torch.cat([nets["e"](truth[i:i + BATCH]) for i in range(0, len(truth), BATCH)]))
    corr = channel_correlation(client, simulator)
    half = len(truth) // 2
    remap = least_squares_remap(client[:half], simulator[:half])
    return {
        "sim_ssim": ssim(simulator, truth),
        "channel_corr_median": float(corr.diag().median()),
        "own_channel_best": float((corr.argmax(1) == torch.arange(len(corr))).float().mean()),
        "plain_half_ssim": ssim(client[half:], truth[half:]),
        "oracle_remap_ssim": ssim(apply_remap(remap, client[half:]), truth[half:]),
    }


def rerun_keeping_attack(cell, data_root) -> tuple[dict, SDAR, Tensor]:
    """Rerun a stored SDAR cell; its metrics, the trained attack and the targets' true images."""
    kept: dict = {}
    build_view = attack_cell.build_view

    class KeptSDAR(SDAR):
        def run(self, *args, **kwargs):
            kept["attack"] = self
            return super().run(*args, **kwargs)

    def kept_view(*args, **kwargs):
        view, truth = build_view(*args, **kwargs)
        kept["truth"] = truth.x
        return view, truth

    with sdar_replaced_by(KeptSDAR), mock.patch.object(attack_cell, "build_view", kept_view):
        metrics, _ = run_cell(cell, RunContext(data_root=data_root))
    return metrics, kept["attack"], kept["truth"]


def main() -> None:
    parser = stored_cells_parser(__doc__)
    args = parser.parse_args()
    data_root, _ = resolve_datasets("auto", None)
    for stored, cell in stored_sdar_cells(args.results, args.cells):
        started = time.perf_counter()
        metrics, attack, truth = rerun_keeping_attack(cell, data_root)
        print(json.dumps({
            "cell": cell.id, "label": cell.label(), "seconds": round(time.perf_counter() - started),
            **{f"stored_{k}": stored["metrics"].get(k) for k in ("ssim", "accuracy")},
            **{k: metrics.get(k) for k in ("ssim", "accuracy", "sdar_payload_mmd", "sdar_payload_mmd_floor")},
            **{k: round(v, 4) for k, v in channel_match(attack, truth).items()},
        }), flush=True)


if __name__ == "__main__":
    main()
