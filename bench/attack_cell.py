"""Run one attack cell: train (or load) the victim, hand the attack its view, score what it returns."""
from __future__ import annotations

import time
from pathlib import Path

import torch

from attacks import ATTACKS, ThreatModel
from bench.artifacts import save_reconstruction_grid
from bench.cell import Cell
from bench.data.splits import CarvedData
from bench.profiles import Profile
from bench.data.splits import partition
from bench.train import build_model, train_victim
from bench.views import build_view

# Datasets scored with the foreground mask of App. B-C3/B-D (black background).
MASKED_DATASETS = ("mnist", "fashion-mnist", "digits")
# Attacks whose released scoring min-max normalises each reconstruction first (UnSplit's L2 prior
# leaves dim images); both scorings are recorded, the normalised one with a ``_minmax`` suffix.
MINMAX_SCORED_ATTACKS = ("unsplit",)


def score_reconstructions(cell: Cell, recon: torch.Tensor, truth: torch.Tensor) -> tuple[dict, dict]:
    """Image metrics (with the foreground-masked variants on MNIST-like data) or tabular R²."""
    from bench.metrics import image_metrics, median_r2, minmax_normalise

    if recon.dim() == 2:
        return {"median_r2": median_r2(recon, truth)}, {}
    masked = cell.dataset in MASKED_DATASETS
    metrics, notes = image_metrics(recon, truth, masked=masked)
    if cell.attack in MINMAX_SCORED_ATTACKS:
        more, more_notes = image_metrics(minmax_normalise(recon), truth, masked=masked)
        metrics.update({f"{k}_minmax": v for k, v in more.items()})
        notes.update({f"{k}_minmax": v for k, v in more_notes.items()})
    return metrics, notes


def run_attack_cell(
    cell: Cell, *, data: CarvedData, profile: Profile, cache_dir: Path | None, artifacts_dir: Path | None
) -> tuple[dict[str, float | None], dict[str, str]]:
    """Metrics of one attack cell: the victim's utility, then the attack's scores.

    The view grants exactly what the attack declares it requires. Passive attacks run on the cached
    trained victim. Co-training attacks watch a training run (which they do not change, so its
    victim is cached for the others); active attacks get their own, hijacked run. Their wall time
    includes that run.
    """
    attack_cls = ATTACKS.get(cell.attack)
    started = time.perf_counter()
    if attack_cls.threat_model is ThreatModel.PASSIVE:
        trained = train_victim(cell, data=data, profile=profile, cache_dir=cache_dir)
        attack = None
        started = time.perf_counter()
    else:
        fresh = build_model(cell, data)
        indices = partition(data.members.y, clients=cell.clients, scheme=cell.partition, alpha=cell.alpha, seed=cell.seed)
        pre_view, _ = build_view(
            cell=cell, model=fresh, data=data, client_indices=indices, granted=attack_cls.requires,
            n_targets=profile.targets, with_targets=False,
        )
        attack = attack_cls(view=pre_view, profile=cell.profile, seed=cell.seed)
        if attack_cls.threat_model is ThreatModel.COTRAIN:
            trained = train_victim(cell, data=data, profile=profile, cache_dir=cache_dir, observers=[attack])
        else:
            trained = train_victim(
                cell, data=data, profile=profile, active=attack, epochs=getattr(attack, "training_epochs", None)
            )
    view, truth = build_view(
        cell=cell, model=trained.model, data=data, client_indices=trained.client_indices,
        granted=attack_cls.requires, n_targets=profile.targets,
    )
    if attack is None:
        attack = attack_cls(view=view, profile=cell.profile, seed=cell.seed)
    else:
        attack.update_view(view)
    output = attack.run()
    metrics: dict[str, float | None] = dict(trained.metrics)
    notes: dict[str, str] = dict(output.notes)
    metrics.update(output.scores)
    if output.reconstructions is not None:
        index = output.target_index if output.target_index is not None else torch.arange(len(output.reconstructions))
        scores, score_notes = score_reconstructions(cell, output.reconstructions, truth.x[index])
        metrics.update(scores)
        notes.update(score_notes)
        metrics["attack_targets"] = float(len(index))
        if artifacts_dir is not None and output.reconstructions.dim() == 4:
            save_reconstruction_grid(artifacts_dir / f"{cell.id}.png", truth.x[index], output.reconstructions)
    metrics["attack_seconds"] = time.perf_counter() - started
    metrics["diverged"] = float(output.diverged)
    return metrics, notes
