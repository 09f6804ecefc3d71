"""Cells whose numbers went non-finite: the victim's training, or the attack's output.

:meth:`bench.run.engine.SplitTrainer.train_epoch` raises :class:`TrainingDiverged` at the end of an
epoch in which a step's loss, payload or returned gradient was not finite; the cell is then stored
``ok`` with ``diverged`` 1, the step it happened at (``diverged_at_step``) and no accuracy or attack
score: those values are empty, their notes say why (:func:`diverged_victim_metrics`). An attack whose
reconstructions or label scores are not finite is marked diverged the same way, nothing scored from
them (:func:`flag_non_finite_output`), its victim's utility kept. Reports leave diverged cells out of every
mean and say so (:func:`bench.report.aggregate.diverged_cells`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from attacks.base import AttackOutput
    from bench.run.cell import Cell

DIVERGED, DIVERGED_AT_STEP = "diverged", "diverged_at_step"


class TrainingDiverged(FloatingPointError):
    """A training step's loss, payload or returned gradient was not finite.

    Attributes:
        step: the first such step (counted from 0 over the whole run).
        epoch: its epoch (from 0).
    """

    def __init__(self, step: int, epoch: int) -> None:
        self.step, self.epoch = step, epoch
        super().__init__(f"victim training diverged at step {step} (epoch {epoch}): its loss, payload or returned "
                         "gradient is not finite")


def check_epoch(finite: Sequence[float], *, first_step: int, epoch: int) -> None:
    """Raise :class:`TrainingDiverged` at the first step of an epoch whose flag is 0.

    Args:
        finite: one flag per step of the epoch (1: the step stayed finite), in order.
        first_step: the run's step count at the epoch's first step.
        epoch: the epoch's index.
    """
    for offset, ok in enumerate(finite):
        if not ok:
            raise TrainingDiverged(first_step + offset, epoch)


def diverged_victim_metrics(
    cell: Cell, diverged: TrainingDiverged, *, utility: Sequence[str] = ("accuracy",),
) -> tuple[dict[str, float | None], dict[str, str]]:
    """The metrics and notes stored for a cell whose victim's training diverged: ``diverged`` 1, its
    step, and the victim's ``utility`` metrics (a language model's: its perplexities) and the attack's
    headline metric left empty with the reason."""
    from bench.run.record import attack_facts

    headline = attack_facts(cell.attack)["headline_metric"]
    empty = [*utility, *([headline] if headline else [])]
    metrics: dict[str, float | None] = {name: None for name in empty}
    metrics.update({DIVERGED: 1.0, DIVERGED_AT_STEP: float(diverged.step)})
    return metrics, {name: str(diverged) for name in [*empty, DIVERGED]}


def flag_non_finite_output(output: AttackOutput, headline_metric: str | None) -> AttackOutput:
    """``output``, marked diverged where its reconstructions or label scores hold a value that is not
    finite: those are dropped (nothing is scored from them), the attack's headline metric is left
    empty, and the reason is its note and the ``diverged`` note. Otherwise ``output`` unchanged."""
    tensors = {"reconstructions": output.reconstructions, "label scores": output.label_scores}
    bad = [name for name, t in tensors.items() if t is not None and not bool(torch.isfinite(t).all())]
    if not bad:
        return output
    reason = f"the attack's {' and '.join(bad)} are not finite"
    empty = {headline_metric: None} if headline_metric else {}
    return dataclasses.replace(
        output, diverged=True, reconstructions=None if "reconstructions" in bad else output.reconstructions,
        label_scores=None if "label scores" in bad else output.label_scores, scores={**output.scores, **empty},
        notes={**output.notes, **{name: reason for name in (*empty, DIVERGED)}},
    )
