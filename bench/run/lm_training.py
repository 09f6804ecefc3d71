"""Train a split language model (a ``gpt2`` victim on a text dataset) and measure its perplexity.

One client trains for the profile's :class:`~bench.profiles.TextConfig` steps on shuffled blocks of
the training text, through the same split engine as every other victim (the payload crosses the
channel per token, each party steps its own optimizer), on the first CUDA device where there is one
(the paper's sizes need it; the ``train_seconds`` note names the device), else on the CPU. Every ``eval_every`` steps, and after the
last, perplexity is measured on the evaluation blocks; the cell's result is the best of these. A run
whose loss, payload or returned gradient goes non-finite is stored diverged at that step, its
perplexities empty (:func:`~bench.run.divergence.diverged_victim_metrics`), as an image victim's is.

Paper: LightSplit (arXiv:2605.13265), App. B-B5 ("the best validation perplexity as an inflation
ratio over Raw at the same budget").
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterator

import torch
from torch import Tensor

from bench.data.splits import CarvedData
from bench.profiles import Profile
from bench.run.cell import Cell
from bench.run.channel import DOWN, UP
from bench.run.device import current_device
from bench.run.divergence import TrainingDiverged, check_epoch, diverged_victim_metrics
from bench.run.engine import SplitModel, SplitTrainer, task_loss
from bench.run.training import batches, build_model, calibrate, seed_everything

UTILITY = ("best_val_perplexity", "final_val_perplexity")  # what a diverged run leaves empty
CALIBRATION_BLOCKS = 64  # blocks whose per-token payload norms fix a DP clip (16k tokens at 256)


@torch.no_grad()
def perplexity(model: SplitModel, x: Tensor, y: Tensor, *, batch_size: int, device: torch.device | None = None) -> float:
    """``exp`` of the mean next-token negative log-likelihood over every target token of ``(x, y)``
    (batches moved to ``device``, default the CPU)."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for start in range(0, len(x), batch_size):
        logits = model(x[start : start + batch_size].to(device))
        target = y[start : start + batch_size].to(device)
        total += float(task_loss(logits, target, reduction="sum"))
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
            text configuration).
    """
    text = profile.text
    if text is None:
        raise ValueError(f"profile {profile.name} has no text configuration")
    if cell.clients != 1:
        raise ValueError(f"language-model cells run one client, got {cell.clients}")
    if cell.lambda_wcc:
        raise ValueError("WCC needs class labels; language-model cells run with lambda_wcc 0")
    seed_everything(cell.seed)
    device = current_device()  # the cell's (bench run --device)
    model = build_model(cell, data).to(device)
    calibrate(model, data.members.x[:CALIBRATION_BLOCKS].to(device), batch_size=text.batch_size)
    trainer = SplitTrainer(model=model, lr=text.lr)
    stream = _endless(
        data.members.x, data.members.y, batch_size=text.batch_size, generator=torch.Generator().manual_seed(cell.seed)
    )
    curve: list[tuple[int, float]] = []
    train_seconds, loss, finite = 0.0, float("nan"), []
    for step in range(1, text.steps + 1):
        x, y = next(stream)
        started = time.perf_counter()
        loss = trainer.step(0, x.to(device), y.to(device))
        train_seconds += time.perf_counter() - started
        finite.append(trainer.finite)
        if step % text.eval_every == 0 or step == text.steps:
            try:  # before the evaluation: a model that went non-finite has no perplexity
                check_epoch(torch.stack(finite).tolist(), first_step=step - len(finite),
                            epoch=(step - len(finite)) * text.batch_size // len(data.members))
            except TrainingDiverged as diverged:
                return diverged_victim_metrics(cell, diverged, utility=UTILITY)
            finite.clear()
            curve.append((step, perplexity(model, data.test.x, data.test.y, batch_size=text.batch_size, device=device)))
    best_step, best = min(curve, key=lambda point: point[1])
    channel, tokens = trainer.channel, data.input_shape[0]
    passes = text.steps * text.batch_size / len(data.members)
    metrics = {
        "best_val_perplexity": best,
        "best_step": float(best_step),
        "final_val_perplexity": curve[-1][1],
        "final_train_loss": float(loss),
        "pretrained": float(not model.init.startswith("fresh")),
        "vocab_size": float(data.num_classes),
        "block_tokens": float(tokens),
        "train_blocks": float(len(data.members)),
        "eval_blocks": float(len(data.test)),
        "train_passes": passes,
        **channel.wire_metrics(),
        "bytes_up_per_token": channel.per_sample("cut", UP) / tokens,
        "bytes_down_per_token": channel.per_sample("cut", DOWN) / tokens,
        "train_seconds": train_seconds,
        **{k: float(v) for k, v in model.defense.describe().items()},
        **model.defense.accounting(epochs=max(1, math.ceil(passes))),
    }
    notes = {
        "best_val_perplexity": "evaluation perplexity by step: " + ", ".join(f"{s}:{p:.2f}" for s, p in curve),
        "pretrained": model.init,
        "train_seconds": f"on {device}" + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else ""),
    }
    return metrics, notes
