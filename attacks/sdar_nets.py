"""SDAR's attacker networks (label conditioning, the payload and image discriminators, the decoder,
the simulated client tail) and their update helpers.

After the released Keras models (zhxchd/SDAR_SplitNN, ``src/models/attacker_models.py``), with
their sizes made parameters so that one builder serves the reduced CPU variant (research notes
§1.11) and the published widths. BatchNorm keeps PyTorch's defaults (Keras ``momentum=0.9,
epsilon=1e-5`` is PyTorch ``momentum=0.1, eps=1e-5``).
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attacks.decoder_nets import VectorToMap

LEAK = 0.2  # LeakyReLU slope of the released discriminators


class LabelCondition(nn.Module):
    """Appends a label to an input: ``Embedding(num_classes, dim) → Linear(H·W)`` as one extra channel
    of a ``(C, H, W)`` map (as released); a flat input gets the ``dim``-vector appended instead.

    Args:
        num_classes: number of labels.
        shape: per-sample shape of the conditioned input.
        dim: embedding width (released: 50).
    """

    def __init__(self, num_classes: int, shape: tuple[int, ...], dim: int = 50) -> None:
        super().__init__()
        self.shape = tuple(shape)
        self.embed = nn.Embedding(num_classes, dim)
        self.proj = nn.Linear(dim, math.prod(shape[1:])) if len(shape) == 3 else None
        self.added = 1 if self.proj is not None else dim

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        e = self.embed(y)
        if self.proj is None:
            return torch.cat([x.flatten(1), e], dim=1)
        return torch.cat([x, self.proj(e).view(-1, 1, *self.shape[1:])], dim=1)


def conditioned_shape(shape: tuple[int, ...], cond: LabelCondition | None) -> tuple[int, ...]:
    """The per-sample shape after ``cond`` (unchanged without conditioning)."""
    if cond is None:
        return tuple(shape)
    if len(shape) == 3:
        return (shape[0] + 1, *shape[1:])
    return (math.prod(shape) + cond.added,)


class _Conditioned(nn.Module):
    """A network whose input may carry a label channel (vanilla SL)."""

    def __init__(self, shape: tuple[int, ...], num_classes: int | None, dim: int) -> None:
        super().__init__()
        self.cond = LabelCondition(num_classes, shape, dim) if num_classes else None
        self.in_shape = conditioned_shape(shape, self.cond)

    def condition(self, x: Tensor, y: Tensor | None) -> Tensor:
        if self.cond is None:
            return x
        if y is None:
            raise ValueError("a label-conditional SDAR network needs labels")
        return self.cond(x, y)


class MapDiscriminator(_Conditioned):
    """Conv 3×3 layers given as ``(channels, stride)``: the first with LeakyReLU(0.2), the others with
    BatchNorm and LeakyReLU(0.2); then Flatten → Dropout → Linear(1) (a logit).

    Released e_dis at L4–L6: ``(64,1) (128,2) (256,1)×3 (256,2)``; d_dis: ``(64,1) (128,2) (128,2)
    (256,2)``; both with dropout 0.4.
    """

    def __init__(
        self, shape: tuple[int, int, int], layers: tuple[tuple[int, int], ...], *, dropout: float,
        num_classes: int | None = None, embedding_dim: int = 50,
    ) -> None:
        super().__init__(shape, num_classes, embedding_dim)
        blocks: list[nn.Module] = []
        channels, (h, w) = self.in_shape[0], self.in_shape[1:]
        for i, (out, stride) in enumerate(layers):
            blocks.append(nn.Conv2d(channels, out, 3, stride=stride, padding=1))
            if i > 0:
                blocks.append(nn.BatchNorm2d(out))
            blocks.append(nn.LeakyReLU(LEAK))
            channels, h, w = out, (h - 1) // stride + 1, (w - 1) // stride + 1
        self.body = nn.Sequential(*blocks, nn.Flatten(1), nn.Dropout(dropout), nn.Linear(channels * h * w, 1))

    def forward(self, x: Tensor, y: Tensor | None = None) -> Tensor:
        return self.body(self.condition(x, y)).squeeze(1)


class VectorDiscriminator(_Conditioned):
    """Linear layers of the given widths (the first with LeakyReLU(0.2), the others with BatchNorm and
    LeakyReLU(0.2)), then Dropout → Linear(1): the payload discriminator when the payload is a
    vector (e.g. LightSplit's ``k``-vector), mirroring :class:`MapDiscriminator`."""

    def __init__(
        self, n: int, widths: tuple[int, ...], *, dropout: float, num_classes: int | None = None,
        embedding_dim: int = 50,
    ) -> None:
        super().__init__((n,), num_classes, embedding_dim)
        blocks: list[nn.Module] = []
        width = self.in_shape[0]
        for i, out in enumerate(widths):
            blocks.append(nn.Linear(width, out))
            if i > 0:
                blocks.append(nn.BatchNorm1d(out))
            blocks.append(nn.LeakyReLU(LEAK))
            width = out
        self.body = nn.Sequential(*blocks, nn.Dropout(dropout), nn.Linear(width, 1))

    def forward(self, x: Tensor, y: Tensor | None = None) -> Tensor:
        return self.body(self.condition(x.flatten(1), y)).squeeze(1)


def _conv_block(cin: int, cout: int) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU()]


def upsampling(channels: int, out_channels: int, size: tuple[int, int], image: tuple[int, int]) -> nn.ConvTranspose2d:
    """A transposed conv from ``size`` exactly onto ``image``: stride ``s = ⌊H/h⌋`` and kernel
    ``H − (h−1)·s`` per axis (MnistNet's 12 → 28: stride 2, kernel 6; 16 → 32: stride 2, kernel 2)."""
    stride = tuple(max(1, big // small) for small, big in zip(size, image))
    kernel = tuple(big - (small - 1) * s for small, big, s in zip(size, image, stride))
    if min(kernel) < 1:
        raise ValueError(f"sdar: cannot upsample a {size} map onto a smaller {image} image")
    return nn.ConvTranspose2d(channels, out_channels, kernel, stride=stride)


class SDARDecoder(_Conditioned):
    """The decoder ``d``: decoded cut activation → image in [0, 1].

    Conv 3×3 + BN + ReLU blocks of widths ``low`` at the cut's resolution; a learned upsampling
    (:func:`upsampling`) onto the image size; blocks of widths ``high`` at the image resolution;
    then Conv 3×3 to the image channels and a sigmoid. Without ``high`` blocks the upsampling itself
    outputs the image channels. A vector cut first goes through a fully connected stage to a
    ``(widths[0], H/4, W/4)`` seed map. Released L4 decoder: nearest ×2 upsampling, then
    ``(32, 16, 16, 16)`` at the image resolution (ConvT 3×3 stride 1 is a 3×3 conv up to the
    kernel's flip); here ``low=(), high=(32, 16, 16, 16)``.

    Args:
        cut_shape: per-sample shape of the decoder's input (the server-decoded cut activation).
        image_shape: ``(c, H, W)``.
        low: block widths at the cut's resolution.
        high: block widths at the image resolution.
        num_classes: condition on labels (vanilla SL) when given.
    """

    def __init__(
        self, cut_shape: tuple[int, ...], image_shape: tuple[int, int, int], *, low: tuple[int, ...],
        high: tuple[int, ...], num_classes: int | None = None, embedding_dim: int = 50,
    ) -> None:
        super().__init__(cut_shape, num_classes, embedding_dim)
        widths = tuple(low) + tuple(high)
        if len(cut_shape) == 3:
            self.entry, channels, size = nn.Identity(), self.in_shape[0], tuple(cut_shape[1:])
        else:
            size = (max(1, image_shape[1] // 4), max(1, image_shape[2] // 4))
            self.entry, channels = VectorToMap([self.in_shape[0]], 4 * widths[0], (widths[0], *size)), widths[0]
        blocks: list[nn.Module] = []
        for out in low:
            blocks += _conv_block(channels, out)
            channels = out
        up_channels = high[0] if high else image_shape[0]
        blocks.append(upsampling(channels, up_channels, size, tuple(image_shape[1:])))
        if high:
            blocks += [nn.BatchNorm2d(up_channels), nn.ReLU()]
            channels = up_channels
            for out in high[1:]:
                blocks += _conv_block(channels, out)
                channels = out
            blocks.append(nn.Conv2d(channels, image_shape[0], 3, padding=1))
        self.body = nn.Sequential(*blocks)

    def forward(self, z: Tensor, y: Tensor | None = None) -> Tensor:
        return torch.sigmoid(self.body(self.entry(self.condition(z, y))))


class SimulatedTail(nn.Module):
    """The attacker's stand-in for the client's tail ``hs``: global average pooling (maps) or flatten,
    then Linear to the classes (released U-shaped tail: GAP → Dense)."""

    def __init__(self, feature_shape: tuple[int, ...], num_classes: int) -> None:
        super().__init__()
        pooled = feature_shape[0] if len(feature_shape) == 3 else math.prod(feature_shape)
        self.pool = nn.AdaptiveAvgPool2d(1) if len(feature_shape) == 3 else nn.Identity()
        self.fc = nn.Linear(pooled, num_classes)

    def forward(self, features: Tensor) -> Tensor:
        return self.fc(self.pool(features).flatten(1))


def bce_to(logits: Tensor, real: bool) -> Tensor:
    """Binary cross-entropy of discriminator logits against all-real or all-fake targets."""
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, float(real)))


def two_player_step(*players: tuple[Tensor, torch.optim.Optimizer]) -> None:
    """Each player's loss differentiated with respect to its own parameters only (a shared forward
    may feed several losses), then every player's update, so all gradients see the same networks."""
    for i, (loss, opt) in enumerate(players):
        params = [p for group in opt.param_groups for p in group["params"]]
        grads = torch.autograd.grad(loss, params, retain_graph=i < len(players) - 1, allow_unused=True)
        for p, g in zip(params, grads):
            p.grad = g
    for _, opt in players:
        opt.step()


def adam(modules: Sequence[nn.Module], lr: float, eps: float) -> torch.optim.Adam:
    return torch.optim.Adam([p for m in modules for p in m.parameters()], lr=lr, eps=eps)


@contextmanager
def frozen(*modules: nn.Module) -> Iterator[None]:
    """Run ``modules`` in evaluation mode without parameter gradients; restore every flag exactly."""
    modes = [(m, m.training) for module in modules for m in module.modules()]
    flags = [(p, p.requires_grad) for module in modules for p in module.parameters()]
    try:
        for module in modules:
            module.eval()
        for p, _ in flags:
            p.requires_grad_(False)
        yield
    finally:
        for m, mode in modes:
            m.training = mode
        for p, flag in flags:
            p.requires_grad_(flag)
