"""Does SDAR fail on learned 1×1 because its simulator starts from a random client 1×1 convolution?

The server holds the trained server half of learned 1×1 (a 1×1 convolution from the ``c``-channel
code back to ``C`` channels). Here SDAR's simulator starts its client half from that half's
pseudo-inverse (weight ``W⁺``, bias ``−W⁺b``), so that the server half undoes it on the code's
span, instead of a fresh initialisation; everything else (victim retrained from the cell's seed,
carving, scoring) runs as in the grid. One JSON line per stored cell; nothing is stored.

    OMP_NUM_THREADS=1 python benchmarks/sdar_simulator_init.py \\
        --results results/issue13-cifar10-jpeg --cells 0cffc6966336
"""
from __future__ import annotations

import json
import time

import torch
from stored_sdar_cells import sdar_replaced_by, stored_cells_parser, stored_sdar_cells

from attacks.sdar import SDAR
from bench.data.autodetect import resolve_datasets
from bench.run.cell_runner import RunContext, run_cell

REPORTED = ("accuracy", "ssim", "mse", "sdar_e_dis_loss_window", "sdar_label_acc", "sdar_decoder_mse",
            "sdar_payload_mmd", "sdar_payload_mmd_floor", "sdar_image_mmd")


class PseudoInverseSDAR(SDAR):
    """SDAR whose simulated learned 1×1 client half starts as the pseudo-inverse of the server half."""

    def _build(self, *, conditional: bool) -> None:
        super()._build(conditional=conditional)
        defense = self.nets["e"].defense
        server, client = defense.server_side.conv, defense.client_side.conv
        inverse = torch.linalg.pinv(server.weight.detach().flatten(1))  # (c, C)
        with torch.no_grad():
            client.weight.copy_(inverse.view_as(client.weight))
            client.bias.copy_(-inverse @ server.bias.detach())


def main() -> None:
    parser = stored_cells_parser(__doc__, "comma list of stored SDAR cell ids on learned-1x1")
    args = parser.parse_args()
    data_root, _ = resolve_datasets("auto", None)
    for stored, cell in stored_sdar_cells(args.results, args.cells, defense="learned-1x1"):
        started = time.perf_counter()
        with sdar_replaced_by(PseudoInverseSDAR):
            metrics, _ = run_cell(cell, RunContext(data_root=data_root))
        print(json.dumps({
            "cell": cell.id, "label": cell.label(), "stored_ssim": stored["metrics"].get("ssim"),
            "stored_decoder_mse": stored["metrics"].get("sdar_decoder_mse"),
            "seconds": round(time.perf_counter() - started), **{k: metrics.get(k) for k in REPORTED},
        }), flush=True)


if __name__ == "__main__":
    main()
