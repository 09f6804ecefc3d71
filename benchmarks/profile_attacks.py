"""Where an attack cell's wall time goes, and how close the attacker's training comes to the machine.

For each attack on MnistNet split-2 (raw and lightsplit-f CR 8 by default, ``cpu`` profile, offline
MNIST, one torch thread), one cell is run through the same contract and view as ``bench run`` and
timed by phase:

- ``victim``: the shared honest training run of a passive attack (cached for the other attacks, so
  not the attack's cost); for a co-training or active attack, the victim's own steps of the run it
  watches or hijacks;
- ``view``: the payloads (and cut gradients) of targets, members and aux data through the trained
  client path (``build_view``);
- ``attacker``: the attack's own work (``run``, plus ``on_step`` / ``client_gradient`` during the run);
- ``scoring``: the image metrics of the reconstructions.

A second run of the attacker at ``--flop-budget`` (the budget knob: a fraction of every iteration
count) counts its FLOPs (torch's flop formulas for convolutions and matrix products, forward and
backward), scaled to the full budget linearly; the attacker's GFLOP/s is that over the full-budget
attacker wall time, against the per-core float32 peak (87 GFLOP/s, a 2048² matrix product). A
third, short run at ``--share-budget`` splits the cell's time with ``torch.profiler`` into dense
compute (convolutions, matrix products), data movement (copies, concatenation, indexing, views),
other tensor ops (elementwise, losses, optimizers), and the rest (Python and dispatch).

    python benchmarks/profile_attacks.py [--attacks sdar,fora --defenses raw --out profile.json]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

from attacks import ATTACKS
from bench.data import DATASETS
from bench.data.autodetect import resolve_datasets
from bench.data.splits import carve
from bench.profiles import get_profile
from bench.run.attack_cell import VictimRunsForCell, score_reconstructions
from bench.run.attacker_views import build_view
from bench.run.cell import Cell

PEAK_GFLOPS = 87.0  # float32, one core, 2048² matmul (developers' guide)
ATTACKS_PROFILED = ("decoder-ref", "decoder-z", "decoder-fused", "unsplit", "sdar", "fora", "fsha")
COMPUTE = ("conv", "mm", "addmm", "bmm", "matmul", "linear", "mkldnn")
MOVEMENT = ("copy", "cat", "index", "clone", "contiguous", "_to_copy", "stack", "gather", "scatter", "slice",
            "select", "view", "reshape", "permute", "transpose", "expand", "unfold", "fold", "as_strided", "empty",
            "zeros", "ones", "full", "narrow", "split", "chunk", "flatten", "squeeze", "unsqueeze", "t")


class FlopCount(TorchDispatchMode):
    """Counts the FLOPs of every op torch's flop counter knows (convolutions, matrix products, their
    backward). Unlike ``FlopCounterMode`` it tracks no modules, so ``autograd.grad`` inside is fine."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        count = flop_registry.get(func._overloadpacket)
        if count is not None:
            self.total += count(*args, **kwargs, out_val=out)
        return out


class Timed:
    """Accumulates the wall time (and, with a counter, the FLOPs) of an attack's hooks."""

    def __init__(self, counter: FlopCount | None = None) -> None:
        self.seconds, self.flops, self.counter = 0.0, 0, counter

    def wrap(self, attack, name: str) -> None:
        inner = getattr(attack, name, None)
        if inner is None:
            return

        def hook(*args, **kwargs):
            return self.call(inner, *args, **kwargs)

        setattr(attack, name, hook)

    def call(self, fn, *args, **kwargs):
        started = time.perf_counter()
        if self.counter is None:
            out = fn(*args, **kwargs)
        else:
            before = self.counter.total
            with self.counter:
                out = fn(*args, **kwargs)
            self.flops += self.counter.total - before
        self.seconds += time.perf_counter() - started
        return out


def run_cell(cell: Cell, data, cache_dir: Path, *, counter: FlopCount | None = None) -> dict:
    """Phase wall times of one attack cell (and the attacker's FLOPs when ``counter`` is given)."""
    profile_ = get_profile(cell.profile)
    attack_cls = ATTACKS.get(cell.attack)
    timed = Timed(counter)

    def build(view):
        attack = attack_cls(view=view, profile=cell.profile, seed=cell.seed, **cell.attack_params())
        timed.wrap(attack, "on_step")
        timed.wrap(attack, "client_gradient")
        return attack

    runs = VictimRunsForCell(cell, data=data, profile=profile_, cache_dir=cache_dir)
    started = time.perf_counter()
    trained, attack = attack_cls.meet_victim(runs, build)
    victim = time.perf_counter() - started - timed.seconds
    in_run = timed.seconds
    started = time.perf_counter()
    view, truth = build_view(cell=cell, model=trained.model, data=data, client_indices=trained.client_indices,
                             granted=attack_cls.requires, n_targets=profile_.targets)
    view_seconds = time.perf_counter() - started
    if attack is None:
        attack = build(view)
    else:
        attack.update_view(view)
    output = timed.call(attack.run)
    scoring = 0.0
    if output.reconstructions is not None:
        index = output.target_index if output.target_index is not None else torch.arange(len(output.reconstructions))
        started = time.perf_counter()
        score_reconstructions(output.reconstructions, truth.x[index], scorings=attack_cls.scorings,
                              masked=data.black_background)
        scoring = time.perf_counter() - started
    return {"victim": victim, "view": view_seconds, "attacker": timed.seconds, "attacker_in_run": in_run,
            "scoring": scoring, "attacker_flops": timed.flops}


def split_time(cell: Cell, data, cache_dir: Path) -> dict:
    """The attacker's time by kind of work, from ``torch.profiler`` (fractions of its wall time)."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        phases = run_cell(cell, data, cache_dir)
    kinds = {"compute": 0.0, "movement": 0.0, "other ops": 0.0}
    for event in prof.key_averages():
        if not event.key.startswith("aten::"):
            continue
        name = event.key[len("aten::"):]
        kind = "compute" if any(k in name for k in COMPUTE) else "movement" if name.split("_")[0] in MOVEMENT or \
            name in MOVEMENT else "other ops"
        kinds[kind] += event.self_cpu_time_total / 1e6
    total = sum(phases[k] for k in ("victim", "view", "attacker", "scoring"))
    kinds["python and dispatch"] = max(0.0, total - sum(kinds.values()))
    return {k: v / total for k, v in kinds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attacks", default=",".join(ATTACKS_PROFILED))
    parser.add_argument("--defenses", default="raw,lightsplit-f")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--flop-budget", type=float, default=0.5,
                        help="budget of the FLOP-counting run (0.5 halves every count exactly but 15 decoder epochs: 8)")
    parser.add_argument("--share-budget", type=float, default=0.1, help="budget of the torch.profiler run")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--work", type=Path, default=Path("/tmp/profile_attacks"))
    parser.add_argument("--out", type=Path, default=None, help="JSON file for the measurements")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data_root, (dataset,) = resolve_datasets("auto", None)
    data = carve(DATASETS.get(dataset)(data_root), get_profile(args.profile))
    rows = []
    for attack in args.attacks.split(","):
        for defense in args.defenses.split(","):
            knobs = {} if defense == "raw" else {"cr": 8.0}
            base = dict(dataset=dataset, victim="mnistnet", cut="split-2", defense=defense, defense_knobs=knobs,
                        profile=args.profile, seed=0, attack=attack)
            cache = args.work / "checkpoints"
            full = run_cell(Cell(**base), data, cache)
            small = Cell(**base, attack_knobs={"budget": args.flop_budget})
            counted = run_cell(small, data, cache, counter=FlopCount())
            shares = split_time(Cell(**base, attack_knobs={"budget": args.share_budget}), data, cache)
            flops = counted["attacker_flops"] / args.flop_budget
            row = {"attack": attack, "defense": defense, **{k: round(v, 2) for k, v in full.items() if k != "attacker_flops"},
                   "attacker_gflop": round(flops / 1e9, 1), "attacker_gflops_per_s": round(flops / 1e9 / full["attacker"], 2),
                   "of_peak": round(flops / 1e9 / full["attacker"] / PEAK_GFLOPS, 3),
                   "shares_at_flop_budget": {k: round(v, 3) for k, v in shares.items()}}
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
