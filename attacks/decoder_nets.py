"""Decoder networks and their training loop, shared by every supervised reconstruction decoder."""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attacks.base import PassiveAttack
from bench.attack_knobs import BUDGET, PRECISION
from bench.profiles import INFERENCE_BATCH_SIZE
from bench.run.device import current_device, seeded_permutation


class ConvImageDecoder(nn.Module):
    """A cut-shaped map ``(C, h, w)`` → image ``(c, H, W)`` in [0, 1].

    After FORA's decoder for shallow cuts (a stride-2 transposed conv + BN + LeakyReLU(0.2), then a
    conv to the image channels), reshaped to fit every cut and a 2-core CPU: two conv blocks at the
    cut's resolution, a bilinear upsample to the input size (MNIST's 12×12 → 28×28 is not a factor
    of two), a narrow conv block at full resolution, and a sigmoid output because images live in
    [0, 1] here (FORA uses tanh on [-1, 1]). Most of the work stays at the cut's resolution.

    Args:
        in_shape: ``(C, h, w)`` of the input map.
        out_shape: ``(c, H, W)`` of the image.
        width: channels of the low-resolution blocks (a quarter of it at full resolution).
    """

    def __init__(self, in_shape: tuple[int, int, int], out_shape: tuple[int, int, int], width: int = 64) -> None:
        super().__init__()
        self.out_shape = tuple(out_shape)
        narrow = max(4, width // 4)
        self.low = nn.Sequential(
            nn.Conv2d(in_shape[0], width, 3, padding=1), nn.BatchNorm2d(width), nn.LeakyReLU(0.2),
            nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.LeakyReLU(0.2),
        )
        self.high = nn.Sequential(
            nn.Conv2d(width, narrow, 3, padding=1), nn.BatchNorm2d(narrow), nn.LeakyReLU(0.2),
            nn.Conv2d(narrow, out_shape[0], 3, padding=1),
        )

    def forward(self, z: Tensor) -> Tensor:
        h = F.interpolate(self.low(z), size=self.out_shape[1:], mode="bilinear", align_corners=False)
        return torch.sigmoid(self.high(h))


class VectorToMap(nn.Module):
    """Fully connected entry stage: one or more flat inputs → a seed map for :class:`ConvImageDecoder`.

    Each input gets its own Linear → ReLU encoder of width ``hidden``; the encodings are concatenated
    and mapped to a ``(channels, side, side)`` map.
    """

    def __init__(self, in_dims: list[int], hidden: int, map_shape: tuple[int, int, int]) -> None:
        super().__init__()
        self.map_shape = tuple(map_shape)
        self.encoders = nn.ModuleList(nn.Sequential(nn.Linear(d, hidden), nn.ReLU()) for d in in_dims)
        self.joint = nn.Linear(hidden * len(in_dims), math.prod(map_shape))

    def forward(self, *inputs: Tensor) -> Tensor:
        h = torch.cat([enc(x.flatten(1)) for enc, x in zip(self.encoders, inputs)], dim=1)
        return F.relu(self.joint(h)).view(-1, *self.map_shape)


def parameter_count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


@dataclass(frozen=True)
class DecoderConfig:
    """Training configuration of a supervised decoder (one profile's, or an attack's own).

    Attributes:
        epochs: the most passes over the training pairs (training stops earlier on a plateau).
        batch_size: mini-batch size.
        lr: Adam's initial learning rate (halved after ``patience // 2`` epochs without a held-out gain).
        width: hidden channels of the conv decoder.
        heldout: share of the attacker's own training pairs held out for stopping (never the targets).
        patience: epochs without a held-out gain after which training stops (the best epoch's weights
            are kept).
    """

    epochs: int
    batch_size: int = 64
    lr: float = 1e-3
    width: int = 64
    heldout: float = 0.1
    patience: int = 4

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 2 or self.lr <= 0 or self.width < 2:
            raise ValueError(f"invalid decoder configuration {self}")
        if not 0 <= self.heldout < 0.5 or self.patience < 1:
            raise ValueError(f"invalid decoder configuration {self}: heldout in [0, 0.5), patience >= 1")


# The supervised decoders' configuration per profile (decoder-ref, decoder and the projection-aware decoders).
# Budget (issue 39, seed-by-seed rule): the cpu fit is converged at ×1: ×4 gains 0.0006 SSIM on raw
# MNIST and 0.0003 on LightSplit-F CR 8 (seed 0, results/issue12-convergence), at most 0.0098 over ten
# CIFAR-10 (JPEG) configurations (seed 0, results/issue13-cifar10-jpeg). `paper`: not measured (no GPU yet).
DECODER_CONFIGS = {
    "smoke": DecoderConfig(epochs=2, width=32),
    "cpu": DecoderConfig(epochs=40, width=64),  # a cap: held-out stopping ends most fits earlier
    "paper": DecoderConfig(epochs=100, width=256),
}


def autocast(precision: str):
    """bfloat16 autocast on the cell's device for ``precision == "bfloat16"``, else nothing (a run's
    own autocast, ``bench run --autocast``, stays as it is)."""
    if precision != "bfloat16":
        return contextlib.nullcontext()
    return torch.autocast(current_device().type, dtype=torch.bfloat16)


@dataclass(frozen=True)
class FitHistory:
    """Convergence diagnostics of one decoder fit: per-epoch mean training MSE and held-out MSE
    (empty without a held-out part), and the epoch whose weights were kept (0-based)."""

    train: list[float]
    heldout: list[float]
    best_epoch: int

    def scores(self, prefix: str) -> dict[str, float]:
        """Final training loss, the held-out curve's endpoints and its best value, epochs run."""
        out = {f"{prefix}_train_mse": self.train[-1], f"{prefix}_epochs": float(len(self.train)),
               f"{prefix}_best_epoch": float(self.best_epoch)}
        if self.heldout:
            out |= {f"{prefix}_heldout_first": self.heldout[0], f"{prefix}_heldout_last": self.heldout[-1],
                    f"{prefix}_heldout_best": min(self.heldout)}
        return out


HELDOUT_MIN = 20  # fewer training pairs than this: no held-out part, the configuration's epochs in full


def fit(model: nn.Module, inputs: tuple[Tensor, ...], targets: Tensor, config: DecoderConfig, seed: int,
        precision: str = "float32") -> FitHistory:
    """Train ``model(*inputs) ≈ targets`` with MSE, stopping on a held-out part of the same pairs.

    A seeded ``config.heldout`` share of the pairs is held out; after every epoch its MSE decides:
    the best weights are kept, the learning rate halves after ``patience // 2`` epochs without a
    gain, and training stops after ``patience`` such epochs or ``config.epochs`` in all.
    """
    generator = torch.Generator().manual_seed(seed)
    model.to(memory_format=torch.channels_last)  # oneDNN's convolutions run about twice as fast in NHWC here
    inputs = tuple(_nhwc(x) for x in inputs)
    n = len(targets)
    n_held = int(n * config.heldout) if n >= HELDOUT_MIN else 0
    split = seeded_permutation(n, generator, device=targets.device)
    train_idx, held_idx = split[n_held:], split[:n_held]
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=max(0, config.patience // 2 - 1))
    train_curve, held_curve = [], []
    best, best_epoch, best_state = math.inf, 0, None
    for epoch in range(config.epochs):
        model.train()
        order = train_idx[seeded_permutation(len(train_idx), generator, device=targets.device)]
        losses, sizes = [], []
        for start in range(0, len(order), config.batch_size):
            idx = order[start : start + config.batch_size]
            if len(idx) < 2:
                continue
            with autocast(precision):
                loss = F.mse_loss(model(*(x[idx] for x in inputs)).float(), targets[idx])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
            sizes.append(len(idx))
        total = 0.0
        for value, size in zip(torch.stack(losses).tolist() if losses else [], sizes):  # one host sync an epoch
            total += value * size
        train_curve.append(total / len(order))
        if not n_held:
            best_epoch = epoch
            continue
        held = float(F.mse_loss(predict(model, tuple(x[held_idx] for x in inputs), precision=precision), targets[held_idx]))
        held_curve.append(held)
        scheduler.step(held)
        if held < best:
            best, best_epoch = held, epoch
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        elif epoch - best_epoch >= config.patience:
            break
    if best_state is not None:
        model.load_state_dict(best_state)
    return FitHistory(train_curve, held_curve, best_epoch)


@torch.no_grad()
def predict(model: nn.Module, inputs: tuple[Tensor, ...], batch_size: int = INFERENCE_BATCH_SIZE,
            precision: str = "float32") -> Tensor:
    model.eval()
    n = len(inputs[0])
    inputs = tuple(_nhwc(x) for x in inputs)
    with autocast(precision):
        out = torch.cat([model(*(x[i : i + batch_size] for x in inputs)).float() for i in range(0, n, batch_size)])
    return out.contiguous()


def _nhwc(x: Tensor) -> Tensor:
    return x.contiguous(memory_format=torch.channels_last) if x.dim() == 4 else x


class SupervisedDecoderAttack(PassiveAttack):
    """Base of the attacks that fit a decoder on (signal, image) pairs: a ``precision`` knob beside
    ``budget`` (bfloat16 autocast for the decoder's training and decoding; float32 by default).

    Args:
        precision: ``float32`` or ``bfloat16``.
        **kwargs: as :class:`attacks.base.Attack`.
    """

    knobs = (BUDGET, PRECISION)
    headline_metric = "ssim"
    configs = DECODER_CONFIGS

    def __init__(self, *, precision: str = "float32", **kwargs) -> None:
        super().__init__(**kwargs)
        self.precision = PRECISION.check(precision)

