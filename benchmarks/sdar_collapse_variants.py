"""Why does SDAR x16 collapse on a defended MNIST victim, and what lands its simulator? Rerun a stored
SDAR cell as released, with its moment tie, with the simulator's payload offset re-taken every window,
or decoded with the snapshot whose simulator lay nearest the observed payloads; print one JSON line a
run and, with ``--windows``, write each run's window trajectory.

    OMP_NUM_THREADS=1 python benchmarks/sdar_collapse_variants.py --results results/issue41-mnist \\
        --cells 5d0c1ab2ba91 --variants released,tie,realign,nearest --windows /tmp/windows.json

Per window (``SDARConfig.window`` iterations) the trajectory holds the iterations so far, the mean
critic loss (``e_dis``, 2 ln 2 ≈ 1.39 when it cannot tell), the simulated tail's accuracy on aux, the
decoder's MSE, the restarts so far, the victim steps seen, and the payload MK-MMD of the simulator's
cut maps of aux inputs (training mode, as the observed payloads are sent) against up to 256 observed
cut maps: a measure the server itself can take. Variants:

* ``released``: SDAR as the grid runs it (``moment_tie`` 0); reproduces the stored cell.
* ``tie``: ``moment_tie`` 1 (:class:`~attacks.payload_moments.PayloadMomentTie`).
* ``realign``: the simulator's defense copy re-takes the client's payload-wide offset from the last
  observed payload at every window end (:meth:`~defenses.base.Defense.align_to_observed`), not only at
  a (re)start: tests whether the client's drifting offset (Shredder's trained noise) is what the
  critic finds.
* ``nearest``: a run that ends collapsed decodes with the networks of the window whose payload MK-MMD
  was lowest, not of its last healthy window.

``--oracle`` also keeps every window's networks and, once the run ends, decodes the targets with each
and appends its SSIM against the true targets to the window's row: ground truth the attacker never
sees, so that any snapshot rule can be scored offline on one run's trajectory. Rows then read
``(iterations, e_dis, label_acc, decoder_mse, restarts, steps_seen, payload_mmd, ssim)``.

Nothing is stored: a rerun keeps the stored cell's id, so it must not land in the stored folder.
"""
from __future__ import annotations

import contextlib
import copy
import json
import time
from pathlib import Path
from unittest import mock

import torch
from stored_sdar_cells import RERUN_METRICS, sdar_replaced_by, stored_cells_parser, stored_sdar_cells

import bench.run.attack_cell as attack_cell
from attacks.mmd import mk_mmd
from attacks.sdar import SDAR, SNAPSHOT
from attacks.sdar_collapse import cloned_states
from bench.data.autodetect import resolve_datasets
from bench.metrics.image import ssim
from bench.run.cell_runner import RunContext, run_cell
from bench.run.device import forked_rng

VARIANTS = ("released", "tie", "realign", "nearest")
REPORTED = (*RERUN_METRICS, "sdar_collapsed", "sdar_decoded_at", "sdar_restarts", "sdar_restarted_at")
MMD_SAMPLES = 256


def sdar_variant(variant: str, windows: list[tuple], truth: dict | None = None) -> type[SDAR]:
    """SDAR run as ``variant``, appending each window's trajectory row to ``windows``; with ``truth``
    (filled with the targets' inputs as the bench builds the view), each row ends with the SSIM of the
    targets decoded by that window's networks."""

    class VariantSDAR(SDAR):
        def __init__(self, **kwargs) -> None:
            super().__init__(**{**kwargs, "moment_tie": 1.0 if variant == "tie" else kwargs.get("moment_tie", 0.0)})
            self.nearest: tuple[float, int, dict] | None = None
            self.window_states: list[dict] = []

        def on_step(self, view) -> None:
            self._server = view.server
            super().on_step(view)

        @torch.no_grad()
        def _payload_mmd(self) -> float:
            observed = self.observed.maps[: min(MMD_SAMPLES, len(self.observed), len(self.aux_x))]
            simulator = copy.deepcopy(self.nets["e"]).train()  # training mode without touching e's statistics
            with forked_rng():
                simulated = self._server.defense.cut_map(simulator(self.aux_x[: len(observed)]))
            return float(mk_mmd(observed.flatten(1), simulated.flatten(1)))

        def _at_window_end(self) -> None:
            rows, w = self._records.rows(), self.config.window
            mean = lambda i: sum(r[i] for r in rows[-w:]) / w  # noqa: E731
            mmd = self._payload_mmd()
            windows.append((len(rows), mean(0), mean(2), mean(3), len(self.watch.restarts), self.steps_seen, mmd))
            if truth is not None:
                self.window_states.append(self._states())
            if variant == "nearest" and (self.nearest is None or mmd < self.nearest[0]):
                self.nearest = (mmd, len(rows), self._states())
            if variant == "realign":
                self._align_simulator(self._last_payload)
            super()._at_window_end()

        def run(self, *args, **kwargs):
            h = self.history
            if variant == "nearest" and self.nearest is not None and self.watch.collapsed(h["e_dis_loss"], h["label_acc"]):
                self.watch.healthy = self.nearest[1:]
            output = super().run(*args, **kwargs)
            if truth is not None:
                self._score_windows(truth["x"])
            return output

        def _states(self) -> dict:
            return cloned_states({name: self.nets[name] for name in SNAPSHOT})

        @torch.no_grad()
        def _score_windows(self, targets: torch.Tensor) -> None:
            if self.conditional:  # the decoder would need the targets' labels, as run() finds them
                raise SystemExit("--oracle scores U-shaped cells only (this one is vanilla SL)")
            maps = self.view.cut_map(self.view.targets.payloads)
            for i, states in enumerate(self.window_states):
                for name, state in states.items():
                    self.nets[name].load_state_dict(state)
                self.nets.eval()
                recon = torch.cat([self.nets["d"](maps[j:j + 256], None) for j in range(0, len(maps), 256)])
                windows[i] = (*windows[i], float(ssim(recon.clamp(0.0, 1.0), targets[: len(recon)]).mean()))

    return VariantSDAR


@contextlib.contextmanager
def targets_kept_in(truth: dict):
    """As the bench builds the attacker's view, the targets' inputs land in ``truth["x"]`` and the
    view itself in ``truth["view"]``."""
    build = attack_cell.build_view

    def keeping(**kwargs):
        view, targets = build(**kwargs)
        truth["x"], truth["view"] = targets.x, view
        return view, targets

    with mock.patch.object(attack_cell, "build_view", keeping):
        yield


def main() -> None:
    parser = stored_cells_parser(__doc__)
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma list of {', '.join(VARIANTS)}")
    parser.add_argument("--windows", type=Path, help="JSON file for every run's window trajectory")
    parser.add_argument("--oracle", action="store_true", help="score every window's networks on the true targets")
    args = parser.parse_args()
    variants = args.variants.split(",")
    if unknown := set(variants) - set(VARIANTS):
        raise SystemExit(f"unknown variants {sorted(unknown)}; choose from {', '.join(VARIANTS)}")
    data_root, _ = resolve_datasets("auto", None)
    trajectories = {}
    for stored, cell in stored_sdar_cells(args.results, args.cells):
        for variant in variants:
            windows: list[tuple] = []
            truth: dict | None = {} if args.oracle else None
            started = time.perf_counter()
            with sdar_replaced_by(sdar_variant(variant, windows, truth)), targets_kept_in(truth if truth is not None else {}):
                metrics, _ = run_cell(cell, RunContext(data_root=data_root))
            trajectories[f"{cell.id}/{variant}"] = windows
            print(json.dumps({"cell": cell.id, "label": cell.label(), "variant": variant,
                              "stored_ssim": stored["metrics"].get("ssim"), "seconds": round(time.perf_counter() - started),
                              "lowest_window_payload_mmd": min((w[6] for w in windows), default=None),
                              **{k: metrics.get(k) for k in REPORTED}}), flush=True)
            if args.windows:
                args.windows.write_text(json.dumps(trajectories))


if __name__ == "__main__":
    main()
