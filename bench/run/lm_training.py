"""Train a split language model (a ``gpt2`` victim on a text dataset) and measure its perplexity.

One client trains for the profile's :class:`~bench.profiles.TextBudget` steps on shuffled blocks of
the training text, through the same split engine as every other victim (the payload crosses the
channel per token, each party steps its own optimizer). Every ``eval_every`` steps, and after the
last, perplexity is measured on the evaluation blocks; the cell's result is the best of these.

Paper: LightSplit (arXiv:2605.13265), App. B-B5 ("the best validation perplexity as an inflation
ratio over Raw at the same budget").
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterator

import torch
from torch import Tensor
from torch.nn import functional as F

from bench.data.splits import CarvedData
from bench.profiles import Profile
from bench.run.cell import Cell
from bench.run.channel import DOWN, UP
from bench.run.engine import SplitModel, SplitTrainer
from bench.run.training import batches, build_model, calibrate, seed_everything

CALIBRATION_BLOCKS = 64  # blocks whose per-token payload norms fix a DP clip (16k tokens at 256)


@torch.no_grad()
def perplexity(model: SplitModel, x: Tensor, y: Tensor, *, batch_size: int) -> float:
    """``exp`` of the mean next-token negative log-likelihood over every target token of ``(x, y)``."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for start in range(0, len(x), batch_size):
        logits = model(x[start : start + batch_size])
        target = y[start : start + batch_size]
        total += float(F.cross_entropy(logits.flatten(0, -2), target.flatten(), reduction="sum"))
        count += target.numel()
    model.train(was_training)
    return math.exp(total / count)


def _endless(x: Tensor, y: Tensor, *, batch_size: int, generator: torch.Generator) -> Iterator[tuple[Tensor, Tensor]]:
    while True:
        yield from batches(x, y, batch_size=batch_size, generator=generator)


def train_language_model(cell: Cell, *, data: CarvedData, profile: Profile) -> tuple[dict[str, float], dict[str, str]]:
    """Metrics of one language-modelling cell and per-metric notes (the perplexity curve, the init).

    Raises:
        ValueError: for a cell this loop does not run (several clients, WCC, a profile without a
            text budget).
    """
    budget = profile.text
    if budget is None:
        raise ValueError(f"profile {profile.name} has no text budget")
    if cell.clients != 1:
        raise ValueError(f"language-model cells run one client, got {cell.clients}")
    if cell.lambda_wcc:
        raise ValueError("WCC needs class labels; language-model cells run with lambda_wcc 0")
    seed_everything(cell.seed)
    model = build_model(cell, data)
    calibrate(model, data.members.x[:CALIBRATION_BLOCKS], batch_size=budget.batch_size)
    trainer = SplitTrainer(model=model, lr=budget.lr)
    stream = _endless(
        data.members.x, data.members.y, batch_size=budget.batch_size, generator=torch.Generator().manual_seed(cell.seed)
    )
    curve: list[tuple[int, float]] = []
    train_seconds, loss = 0.0, float("nan")
    for step in range(1, budget.steps + 1):
        x, y = next(stream)
        started = time.perf_counter()
        loss = trainer.step(0, x, y)
        train_seconds += time.perf_counter() - started
        if step % budget.eval_every == 0 or step == budget.steps:
            curve.append((step, perplexity(model, data.test.x, data.test.y, batch_size=budget.batch_size)))
    best_step, best = min(curve, key=lambda point: point[1])
    channel, tokens = trainer.channel, data.input_shape[0]
    passes = budget.steps * budget.batch_size / len(data.members)
    metrics = {
        "best_val_perplexity": best,
        "best_step": float(best_step),
        "final_val_perplexity": curve[-1][1],
        "final_train_loss": loss,
        "pretrained": float(not model.init.startswith("fresh")),
        "vocab_size": float(data.num_classes),
        "block_tokens": float(tokens),
        "train_blocks": float(len(data.members)),
        "eval_blocks": float(len(data.test)),
        "train_passes": passes,
        "bytes_up_per_sample": channel.per_sample("cut", UP),
        "bytes_down_per_sample": channel.per_sample("cut", DOWN),
        "bytes_up_per_token": channel.per_sample("cut", UP) / tokens,
        "bytes_down_per_token": channel.per_sample("cut", DOWN) / tokens,
        "tail_bytes_up_per_sample": channel.per_sample("tail", UP),
        "tail_bytes_down_per_sample": channel.per_sample("tail", DOWN),
        "train_seconds": train_seconds,
        **{k: float(v) for k, v in model.defense.describe().items()},
        **model.defense.accounting(epochs=max(1, math.ceil(passes))),
    }
    notes = {
        "best_val_perplexity": "evaluation perplexity by step: " + ", ".join(f"{s}:{p:.2f}" for s, p in curve),
        "pretrained": model.init,
    }
    return metrics, notes
