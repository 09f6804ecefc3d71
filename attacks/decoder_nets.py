"""Decoder networks and their training loop, shared by every supervised reconstruction decoder."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attacks.base import BUDGET, PassiveAttack
from bench.knobs import Knob


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
class DecoderBudget:
    """Training budget of a supervised decoder.

    Attributes:
        epochs: passes over the training pairs.
        batch_size: mini-batch size.
        lr: Adam learning rate.
        width: hidden channels of the conv decoder.
    """

    epochs: int
    batch_size: int = 64
    lr: float = 1e-3
    width: int = 64

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 2 or self.lr <= 0 or self.width < 2:
            raise ValueError(f"invalid decoder budget {self}")


# The supervised decoders' budgets per profile (decoder-ref, decoder and the projection-aware decoders).
DECODER_BUDGETS = {
    "smoke": DecoderBudget(epochs=2, width=32),
    "cpu": DecoderBudget(epochs=15, width=64),
    "paper": DecoderBudget(epochs=100, width=256),
}


PRECISION = Knob("precision", str, default="float32", choices=("float32", "bfloat16"),
                 help="the decoder's forward and backward under bfloat16 autocast (weights and Adam stay float32)")


def autocast(precision: str):
    """bfloat16 autocast on the CPU for ``precision == "bfloat16"``, else nothing."""
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16")


def fit(model: nn.Module, inputs: tuple[Tensor, ...], targets: Tensor, budget: DecoderBudget, seed: int,
        precision: str = "float32") -> list[float]:
    """Train ``model(*inputs) ≈ targets`` with MSE; returns the mean loss of every epoch."""
    generator = torch.Generator().manual_seed(seed)
    model.to(memory_format=torch.channels_last)  # oneDNN's convolutions run about twice as fast in NHWC here
    inputs = tuple(_nhwc(x) for x in inputs)
    optimizer = torch.optim.Adam(model.parameters(), lr=budget.lr)
    n = len(targets)
    history = []
    model.train()
    for _ in range(budget.epochs):
        order = torch.randperm(n, generator=generator)
        total = 0.0
        for start in range(0, n, budget.batch_size):
            idx = order[start : start + budget.batch_size]
            if len(idx) < 2:
                continue
            with autocast(precision):
                loss = F.mse_loss(model(*(x[idx] for x in inputs)).float(), targets[idx])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        history.append(total / n)
    return history


@torch.no_grad()
def predict(model: nn.Module, inputs: tuple[Tensor, ...], batch_size: int = 500, precision: str = "float32") -> Tensor:
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

    def __init__(self, *, precision: str = "float32", **kwargs) -> None:
        super().__init__(**kwargs)
        self.precision = PRECISION.check(precision)

