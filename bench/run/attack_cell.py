"""Run one attack cell: obtain the victim the attack's contract asks for, hand the attack its view,
score what it returns."""
from __future__ import annotations

import time
from pathlib import Path

import torch

from attacks import ATTACKS, Attack, AttackerView, AttackOutput, Capability, MissingCapabilityError, Scoring
from bench.data.splits import CarvedData
from bench.leakage.measures import attack_free_notes
from bench.profiles import Profile
from bench.run.artifacts import save_reconstruction_grid
from bench.run.attacker_views import build_view, vanilla_refusal
from bench.run.cell import Cell
from bench.run.device import float32_scope
from bench.run.divergence import flag_non_finite_output
from bench.run.progress import RESUMED_SECONDS
from bench.run.training import TrainedVictim, initial_model, train_victim


def score_reconstructions(
    recon: torch.Tensor, truth: torch.Tensor, *, scorings: tuple[Scoring, ...], masked: bool, lpips_weights: Path | None = None
) -> tuple[dict, dict]:
    """Image metrics under each of the attack's scorings (metric names carry the scoring's suffix),
    with the foreground-masked variants where the data has a black background; or tabular R².
    LPIPS reads its AlexNet trunk from ``lpips_weights`` (default: torchvision's cached copy)."""

    with float32_scope():  # metrics in float32, whatever the run's autocast
        return _scores(recon.float(), truth.float(), scorings=scorings, masked=masked, lpips_weights=lpips_weights)


def _scores(recon, truth, *, scorings, masked, lpips_weights):
    from bench.metrics import LpipsScorer, image_metrics, median_r2, minmax_normalise

    if recon.dim() == 2:
        return {"median_r2": median_r2(recon, truth)}, {}
    transforms = {
        Scoring.AS_RETURNED: lambda x: x,
        Scoring.MINMAX: minmax_normalise,
        Scoring.BLACK: torch.zeros_like,
        Scoring.GREY: lambda x: torch.full_like(x, 0.5),
    }
    metrics, notes = {}, {}
    scorer = LpipsScorer(weights=lpips_weights)
    for scoring in scorings:
        values, reasons = image_metrics(transforms[scoring](recon), truth, masked=masked, lpips_scorer=scorer)
        metrics.update({f"{k}{scoring.value}": v for k, v in values.items()})
        notes.update({f"{k}{scoring.value}": v for k, v in reasons.items()})
    return metrics, notes


class VictimRunsForCell:
    """The training runs one cell can give its attack (:class:`attacks.base.VictimRuns`).

    Also keeps the time the attack's own work started: after the shared honest run for a passive
    attack; before the watched or hijacked run otherwise, whose wall time is the attack's.
    """

    def __init__(self, cell: Cell, *, data: CarvedData, profile: Profile, cache_dir: Path | None) -> None:
        self.cell, self.data, self.profile, self.cache_dir = cell, data, profile, cache_dir
        self.attack_started = time.perf_counter()

    def honest(self) -> TrainedVictim:
        trained = train_victim(self.cell, data=self.data, profile=self.profile, cache_dir=self.cache_dir)
        self.attack_started = time.perf_counter()
        return trained

    def view_before_training(self) -> AttackerView:
        """The view of the victim as its training starts: the model :func:`train_victim` starts from,
        its defense calibrated as the victim's is, so the public DP clip the attacker copies is the
        client's (built uncalibrated, the attacker's copy fixed its own clip on the simulator's first
        batch: 30 times the client's on CIFAR-10, and SDAR's critic told the two apart outright)."""
        cell, data = self.cell, self.data
        model, indices = initial_model(cell, data, self.profile)
        view, _ = build_view(
            cell=cell, model=model, data=data, client_indices=indices,
            granted=ATTACKS.get(cell.attack).requires, n_targets=self.profile.targets, with_targets=False,
        )
        return view

    def watched(self, attack) -> TrainedVictim:
        return train_victim(self.cell, data=self.data, profile=self.profile, cache_dir=self.cache_dir, observers=[attack])

    def hijacked(self, attack) -> TrainedVictim:
        return train_victim(
            self.cell, data=self.data, profile=self.profile, active=attack, epochs=attack.hijacked_epochs,
            client_lr=attack.hijacked_client_lr,
        )


def run_attack_cell(
    cell: Cell, *, data: CarvedData, profile: Profile, cache_dir: Path | None, artifacts_dir: Path | None,
    lpips_weights: Path | None = None,
) -> tuple[dict[str, float | None], dict[str, str]]:
    """Metrics of one attack cell: the victim's utility, then the attack's scores.

    The attack's contract decides which run it meets (:meth:`attacks.base.Attack.meet_victim`); the
    view grants exactly what the attack declares it requires. An attack that names a
    ``substitute_network`` also gets the R² of its transfer to the victim's head
    (:mod:`bench.run.transfer`), after ``attack_seconds`` is taken. LPIPS reads its AlexNet trunk from
    ``lpips_weights`` (default: torchvision's cached copy). Label scores an attack returns are scored
    against the targets' true labels in U-shaped cells (:mod:`bench.metrics.labels`).

    Raises:
        MissingCapabilityError: a label attack (:func:`infers_labels`) on a vanilla-SL cell, before
            any victim trains; or a view that lacks what the attack requires.
    """
    attack_cls = ATTACKS.get(cell.attack)
    if cell.protocol != "ushaped" and infers_labels(attack_cls):
        raise MissingCapabilityError(f"{cell.attack}: {vanilla_refusal('label attacks')}")

    def build(view: AttackerView) -> Attack:
        return attack_cls(view=view, profile=cell.profile, seed=cell.seed, **cell.attack_params())

    runs = VictimRunsForCell(cell, data=data, profile=profile, cache_dir=cache_dir)
    trained, attack = attack_cls.meet_victim(runs, build)
    view, truth = build_view(
        cell=cell, model=trained.model, data=data, client_indices=trained.client_indices,
        granted=attack_cls.requires, n_targets=profile.targets,
    )
    if attack is None:
        attack = build(view)
    else:
        attack.update_view(view)
    output = flag_non_finite_output(attack.run(), attack_cls.headline_metric)
    metrics: dict[str, float | None] = {**trained.metrics, **output.scores}
    notes: dict[str, str] = {**attack_free_notes(trained.model.defense, trained.metrics), **output.notes}
    if output.reconstructions is not None:
        _score(output, truth.x, attack_cls.scorings, data.black_background, metrics, notes, lpips_weights)
        if artifacts_dir is not None and output.reconstructions.dim() == 4:
            index = _target_index(output)
            save_reconstruction_grid(artifacts_dir / f"{cell.id}.png", truth.x[index], output.reconstructions)
    if output.label_scores is not None and cell.protocol == "ushaped":  # vanilla SL: the labels are the server's
        _score_labels(output, truth.y, data.num_classes, metrics, notes)
    metrics["attack_seconds"] = time.perf_counter() - runs.attack_started
    if trained.resumed is not None:  # a watched run stopped part way: the time it ran before counts
        metrics["attack_seconds"] += trained.resumed.seconds
        metrics["resumed_at_epoch"] = float(trained.resumed.epochs)
        metrics[RESUMED_SECONDS] = trained.resumed.seconds
        notes["resumed_at_epoch"] = "the watched run resumed from its snapshot after this many epochs (same numbers)"
        notes[RESUMED_SECONDS] = "seconds the stopped runs spent before this one resumed; wall, attack and train seconds include them"
    metrics["diverged"] = float(output.diverged)
    if attack_cls.substitute_network is not None:  # ground truth the attack never saw: scored here
        from bench.run.transfer import substitute_transfer

        transfer, transfer_notes = substitute_transfer(
            attack.networks()[attack_cls.substitute_network], trained.model.head_of(0), data.nonmembers.x
        )
        metrics.update(transfer)
        notes.update(transfer_notes)
    return metrics, notes


def infers_labels(attack_cls: type[Attack]) -> bool:
    """Whether the attack infers the client's labels: it reads the tail's gradients or its headline
    is a label metric (:data:`bench.metrics.labels.LABEL_METRICS`). Such an attack has nothing to
    infer in vanilla SL, where the server holds the labels."""
    from bench.metrics.labels import LABEL_METRICS

    return Capability.TAIL_GRADIENTS in attack_cls.requires or attack_cls.headline_metric in LABEL_METRICS


def _target_index(output: AttackOutput) -> torch.Tensor:
    if output.target_index is not None:
        return output.target_index
    scored = output.reconstructions if output.reconstructions is not None else output.label_scores
    return torch.arange(len(scored))


def _score_labels(output: AttackOutput, truth: torch.Tensor, num_classes: int, metrics: dict, notes: dict) -> None:
    from bench.metrics.labels import label_metrics

    index = _target_index(output).to(truth.device)
    scores, score_notes = label_metrics(output.label_scores, truth[index], num_classes=num_classes, top1=output.label_top1)
    metrics.update(scores)
    notes.update(score_notes)


def _score(output: AttackOutput, truth: torch.Tensor, scorings, masked: bool, metrics: dict, notes: dict,
           lpips_weights: Path | None) -> None:
    index = _target_index(output)
    scores, score_notes = score_reconstructions(output.reconstructions, truth[index], scorings=scorings, masked=masked,
                                                lpips_weights=lpips_weights)
    metrics.update(scores)
    notes.update(score_notes)
    metrics["attack_targets"] = float(len(index))
