"""Does SDAR decode better with a decoder refitted to convergence on its simulator's pairs?

Issue 39 found SDAR's co-trained decoder ``d`` under-trained at the cpu budget (training MSE 0.0139
at ×1, 0.0084 at ×16) and smaller than the reference decoder. This trains one SDAR run on a victim
(as a cell does: it watches every step), then decodes the targets two ways and scores both against
the truth: ``d`` as the attack returns it, and a fresh decoder of the reference decoder's
architecture (:func:`attacks.decoders.image_decoder`, the profile's width) fitted with the reference
decoder's early-stopped loop (:func:`attacks.decoder_nets.fit`, epoch cap × budget) on every aux
input against its cut map through the simulator in evaluation mode. One JSON line; nothing stored.

    OMP_NUM_THREADS=1 python benchmarks/sdar_refit.py --dataset mnist --budget 1 --seed 0
"""
from __future__ import annotations

import argparse
import json
import time

import torch

import victims  # noqa: F401  (registers every victim)
from attacks.base import scale_counts
from attacks.decoder_nets import DECODER_CONFIGS, fit, predict
from attacks.decoders import image_decoder
from attacks.sdar import SDAR
from bench.data import DATASETS
from bench.data.splits import carve
from bench.metrics.image import ssim
from bench.profiles import get_profile
from bench.run.attacker_views import build_view
from bench.run.cell import Cell
from bench.run.training import initial_model, train_victim
from victims.base import VICTIMS, default_victim


def refitted_decoder(attack: SDAR, profile: str, budget: float, seed: int) -> tuple[torch.nn.Module, dict]:
    """The reference architecture fitted (early-stopped) to the simulator's (cut map, aux input) pairs."""
    config = scale_counts(DECODER_CONFIGS[profile], budget, "epochs")
    attack.nets.eval()
    with torch.no_grad():
        maps = torch.cat([attack.view.cut_map(attack.nets["e"](attack.aux_x[i:i + 256]))
                          for i in range(0, len(attack.aux_x), 256)])
    torch.manual_seed(seed)
    decoder = image_decoder(attack.view.cut_shape, attack.view.input_shape, config.width)
    history = fit(decoder, (maps,), attack.aux_x, config, seed)
    return decoder, history.scores("refit")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="mnist")
    parser.add_argument("--data-root", default="../shared/data")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    profile = get_profile(args.profile)
    data = carve(DATASETS.get(args.dataset)(args.data_root), profile)
    name = default_victim(args.dataset)
    cell = Cell(dataset=args.dataset, victim=name, cut=VICTIMS.get(name).default_cut, defense="raw", profile=args.profile,
                seed=args.seed, attack="sdar")
    model, indices = initial_model(cell, data, profile)
    before, _ = build_view(cell=cell, model=model, data=data, client_indices=indices, granted=SDAR.requires,
                           n_targets=profile.targets, with_targets=False)
    attack = SDAR(view=before, profile=args.profile, seed=args.seed, budget=args.budget)
    started = time.perf_counter()
    trained = train_victim(cell, data=data, profile=profile, observers=[attack])
    view, truth = build_view(cell=cell, model=trained.model, data=data, client_indices=trained.client_indices,
                             granted=SDAR.requires, n_targets=profile.targets)
    attack.update_view(view)
    out = attack.run()
    cotrain_seconds = time.perf_counter() - started
    started = time.perf_counter()
    decoder, scores = refitted_decoder(attack, args.profile, args.budget, args.seed)
    with torch.no_grad():
        refit = predict(decoder, (view.cut_map(view.targets.payloads),)).clamp(0, 1)
    print(json.dumps({
        "dataset": args.dataset, "budget": args.budget, "seed": args.seed,
        "ssim_cotrained_d": round(float(ssim(out.reconstructions, truth.x).mean()), 4),
        "ssim_refitted": round(float(ssim(refit, truth.x).mean()), 4),
        "sdar_decoder_mse": out.scores["sdar_decoder_mse"], **scores,
        "cotrain_seconds": round(cotrain_seconds), "refit_seconds": round(time.perf_counter() - started),
    }))


if __name__ == "__main__":
    main()
