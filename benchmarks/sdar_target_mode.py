"""Does SDAR collapse on some victims because its targets cross the cut in evaluation mode?

SDAR's simulator and decoder train on cut maps made with BatchNorm on batch statistics (training
mode), and the payloads it watches during training are made the same way by the client. The suite's
targets are the trained client's payloads in evaluation mode (running statistics); the released SDAR
evaluates the client in training mode. Here the targets cross the cut as the released evaluation
makes them: the client head in training mode, batches of 128, running statistics left untouched.
The attacker's training is unchanged (it never sees the targets until it decodes them), so the
stored cell is the evaluation-mode run of the same attacker: compare its SSIM with this one's (its
``sdar_decoder_mse`` and ``accuracy`` must match the stored ones, else the machine did not reproduce
the cell). One JSON line per stored cell; nothing is stored.

    OMP_NUM_THREADS=1 python benchmarks/sdar_target_mode.py \\
        --results results/issue13-cifar10-jpeg --cells 2e3791ec49f2
"""
from __future__ import annotations

import json
import time
from unittest import mock

import torch
from stored_sdar_cells import stored_cells_parser, stored_sdar_cells
from torch import nn

import bench.run.attacker_views as attacker_views
from bench.data.autodetect import resolve_datasets
from bench.run.cell_runner import RunContext, run_cell
from defenses.payload import concat

REPORTED = ("accuracy", "ssim", "mse", "sdar_decoder_mse", "sdar_e_dis_loss_window", "sdar_payload_mmd",
            "sdar_payload_mmd_floor")
RELEASED_BATCH = 128


@torch.no_grad()
def payloads_in_training_mode(model, x, client: int = 0, batch_size: int = RELEASED_BATCH):
    """The client's payloads with its head's BatchNorm on batch statistics (running statistics kept)."""
    model.eval()
    head = model.head_of(client)
    norms = [m for m in head.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    momenta = [m.momentum for m in norms]
    for m in norms:
        m.train()
        m.momentum = 0.0  # the running statistics stay as trained
    try:
        path = attacker_views.ClientPath(head, model.defense)
        return concat([path(x[i : i + batch_size]) for i in range(0, len(x), batch_size)])
    finally:
        for m, momentum in zip(norms, momenta):
            m.eval()
            m.momentum = momentum


def main() -> None:
    parser = stored_cells_parser(__doc__)
    args = parser.parse_args()
    data_root, _ = resolve_datasets("auto", None)
    for stored, cell in stored_sdar_cells(args.results, args.cells):
        started = time.perf_counter()
        with mock.patch.object(attacker_views, "observe_payloads", payloads_in_training_mode):
            metrics, _ = run_cell(cell, RunContext(data_root=data_root))
        print(json.dumps({
            "cell": cell.id, "label": cell.label(), "seconds": round(time.perf_counter() - started),
            **{f"stored_{k}": stored["metrics"].get(k) for k in ("ssim", "sdar_decoder_mse", "accuracy")},
            **{k: metrics.get(k) for k in REPORTED},
        }), flush=True)


if __name__ == "__main__":
    main()
