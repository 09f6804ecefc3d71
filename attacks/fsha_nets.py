"""FSHA's attacker networks: pilot encoder f̃, decoder f̃⁻¹ and WGAN-GP critic D, sized for the payload.

The attacker reads every payload in one per-sample *layout* (:func:`payload_layout`): the cut map
``(C, h, w)`` when the payload's coordinates are the cut activation's own (raw, top-K), the code map
of a learned 1×1 bottleneck, or a flat ``(k,)`` vector (a LightSplit projection). Map payloads get
convolutional decoders and critics (the release's families, reduced as in the research notes
§4.10); vector payloads get fully-connected ones of matching input (LightSplit App. B-C5).

Every attacker layer starts from Glorot-uniform weights and zero biases (Keras' default, which the
PyTorch port of the release reproduces); the defense inside the pilot keeps its own initialisation.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from defenses.base import Defense
from defenses.payload import Payload, as_vector, values_of


@torch.no_grad()
def payload_layout(defense: Defense, cut_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The per-sample shape in which the attacker reads this defense's payloads.

    A probe activation is encoded by ``defense``: a 4-D payload (learned 1×1) is read as its own
    ``(c, h, w)`` map; a payload of ``d`` dense values that agree with the probe wherever they are
    non-zero (raw, top-K) is read as the cut map; anything else (projections) is a ``(k,)`` vector.
    """
    probe = torch.rand(2, *cut_shape, generator=torch.Generator().manual_seed(0)) + 0.5
    payload = defense.encode(probe)
    if values_of(payload).dim() == 4:
        return tuple(values_of(payload).shape[1:])
    dense = as_vector(payload)
    if dense.shape[1] == math.prod(cut_shape) and len(cut_shape) == 3:
        kept = dense != 0
        if bool(kept.any()) and torch.equal(dense[kept], probe.flatten(1)[kept]):
            return tuple(cut_shape)
    return (dense.shape[1],)


def read_payload(payload: Payload, layout: tuple[int, ...]) -> Tensor:
    """A payload as a dense ``(B, *layout)`` tensor (differentiable in the payload's values)."""
    return as_vector(payload).reshape(-1, *layout)


def glorot_(module: nn.Module) -> nn.Module:
    """Glorot-uniform weights and zero biases for every conv and linear layer of ``module``."""
    for layer in module.modules():
        if isinstance(layer, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
            nn.init.xavier_uniform_(layer.weight)
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)
    return module


class Pilot(nn.Module):
    """f̃: image in [-1, 1] → payload, through a fresh copy of the defense (the same bottleneck).

    Linear 3×3 convolutions as in the release's current pilot: stride 2 while the map is at least
    twice the cut's side, then one to the cut's channels; a bilinear resize to the cut's side where
    strides cannot reach it (28 → 14 → 12 for MnistNet split-2), and a ReLU: the benchmark's victims
    send post-ReLU activations, so a signed pilot space would be unreachable for the client (the
    release's ResNet cut is a signed residual sum; deviation). Two convolutions keep the pilot's
    receptive field (7 px at one stride) close to a shallow client's (MnistNet split-2: 6 px), as in
    the research notes' reduced variant (§4.10). A vector cut ``(d,)`` gets a linear layer instead.

    Args:
        input_shape: ``(c, H, W)`` of the images.
        cut_shape: ``(C, h, w)`` or ``(d,)`` of the victim's cut activation.
        width: channels of the hidden convolutions.
        defense: the fresh defense copy; its client half (a learned 1×1 encoder) trains with f̃.
    """

    def __init__(self, input_shape: tuple[int, ...], cut_shape: tuple[int, ...], width: int, defense: Defense) -> None:
        super().__init__()
        c, height, wide = input_shape
        target = cut_shape[1:] if len(cut_shape) == 3 else (max(1, height // 4), max(1, wide // 4))
        strides = max(0, int(math.floor(math.log2(min(height / target[0], wide / target[1])))))
        layers = [nn.Conv2d(c if i == 0 else width, width, 3, stride=2, padding=1) for i in range(strides)]
        self.features = nn.Sequential(*layers)
        self.size = tuple(target)
        channels = width if strides else c
        if len(cut_shape) == 3:
            self.out: nn.Module = nn.Conv2d(channels, cut_shape[0], 3, padding=1)
        else:
            self.out = nn.Sequential(
                nn.Conv2d(channels, width, 3, padding=1), nn.AdaptiveAvgPool2d(target), nn.Flatten(1),
                nn.Linear(width * target[0] * target[1], cut_shape[0]),
            )
        glorot_(self)
        self.defense = defense

    def forward(self, x: Tensor) -> Payload:
        h = self.out(self.features(x))
        if h.dim() == 4 and tuple(h.shape[-2:]) != self.size:
            h = F.interpolate(h, size=self.size, mode="bilinear", align_corners=False)
        return self.defense.encode(F.relu(h))

    def trainable(self) -> list[nn.Parameter]:
        """f̃'s own layers and the client half of its defense (never the defense's server half)."""
        return list(self.features.parameters()) + list(self.out.parameters()) + self.defense.client_parameters()


class MapDecoder(nn.Module):
    """f̃⁻¹ on a map payload: Conv3×3 → ReLU → ConvT3×3 (stride 2) → ReLU → Conv3×3 to the image
    channels → bilinear resize to the image side (24 → 28 for MnistNet split-2; resizing the
    one-channel output, not the hidden maps, halves the decoder's CPU time) → tanh (images in
    [-1, 1], as released)."""

    def __init__(self, layout: tuple[int, int, int], input_shape: tuple[int, ...], width: int) -> None:
        super().__init__()
        self.size = tuple(input_shape[1:])
        self.net = nn.Sequential(
            nn.Conv2d(layout[0], width, 3, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(width, width, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
            nn.Conv2d(width, input_shape[0], 3, padding=1),
        )
        glorot_(self)

    def forward(self, z: Tensor) -> Tensor:
        h = self.net(z)
        if tuple(h.shape[-2:]) != self.size:
            h = F.interpolate(h, size=self.size, mode="bilinear", align_corners=False)
        return torch.tanh(h)


class VectorDecoder(nn.Module):
    """f̃⁻¹ on a vector payload: a fully-connected net ``k → hidden → hidden → c·H·W``, tanh output."""

    def __init__(self, k: int, input_shape: tuple[int, ...], hidden: int) -> None:
        super().__init__()
        self.input_shape = tuple(input_shape)
        self.net = nn.Sequential(
            nn.Linear(k, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, math.prod(input_shape)),
        )
        glorot_(self)

    def forward(self, z: Tensor) -> Tensor:
        return torch.tanh(self.net(z)).view(-1, *self.input_shape)


class ResBlock(nn.Module):
    """The release's critic block without BatchNorm: ``x + conv(relu(conv(relu(x))))``."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.ReLU(), nn.Conv2d(width, width, 3, padding=1), nn.ReLU(), nn.Conv2d(width, width, 3, padding=1)
        )

    def forward(self, x: Tensor) -> Tensor:
        return x + self.body(x)


class MapCritic(nn.Module):
    """D on a map payload: Conv3×3 (stride 2) → ``blocks`` × ResBlock → Conv3×3 (stride 2) →
    Flatten → Linear → one score (research notes §4.10: downsample first)."""

    def __init__(self, layout: tuple[int, int, int], width: int, blocks: int) -> None:
        super().__init__()
        h, w = (-(-layout[1] // 4), -(-layout[2] // 4))
        self.net = nn.Sequential(
            nn.Conv2d(layout[0], width, 3, stride=2, padding=1),
            *(ResBlock(width) for _ in range(blocks)),
            nn.Conv2d(width, width, 3, stride=2, padding=1),
            nn.Flatten(1),
            nn.Linear(width * h * w, 1),
        )
        glorot_(self)

    def forward(self, z: Tensor) -> Tensor:
        return self.net(z)


class VectorCritic(nn.Module):
    """D on a vector payload: a fully-connected net ``k → hidden → hidden → 1`` with ReLUs."""

    def __init__(self, k: int, hidden: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(k, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1)
        )
        glorot_(self)

    def forward(self, z: Tensor) -> Tensor:
        return self.net(z)


def build_decoder(layout: tuple[int, ...], input_shape: tuple[int, ...], *, width: int, hidden: int) -> nn.Module:
    """A conv decoder for a map layout, a fully-connected one for a vector layout."""
    if len(layout) == 3:
        return MapDecoder(layout, input_shape, width)  # type: ignore[arg-type]
    return VectorDecoder(layout[0], input_shape, hidden)


def build_critic(layout: tuple[int, ...], *, width: int, blocks: int, hidden: int) -> nn.Module:
    """A conv critic for a map layout, a fully-connected one for a vector layout."""
    if len(layout) == 3:
        return MapCritic(layout, width, blocks)  # type: ignore[arg-type]
    return VectorCritic(layout[0], hidden)


def gradient_penalty(critic: nn.Module, real: Tensor, fake: Tensor, generator: torch.Generator) -> Tensor:
    """WGAN-GP: ``mean((‖∇D(x̂)‖₂ − 1)²)`` at ``x̂ = ε·real + (1−ε)·fake``, one ε ~ U(0, 1) per
    sample, the norm over each sample's whole flattened payload (the PyTorch port's form; the TF
    release takes per-channel norms over the spatial axes, which is not used here)."""
    eps = torch.rand(len(real), *([1] * (real.dim() - 1)), generator=generator, dtype=real.dtype)
    mix = (eps * real.detach() + (1 - eps) * fake.detach()).requires_grad_(True)
    (grad,) = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)
    norm = (grad.flatten(1).pow(2).sum(1) + 1e-12).sqrt()
    return (norm - 1).pow(2).mean()
