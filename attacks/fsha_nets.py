"""FSHA's attacker networks: pilot encoder f̃, decoder f̃⁻¹ and WGAN-GP critic D, sized for the cut.

The attacker reads every payload as its cut map ``(C, h, w)`` (:meth:`defenses.base.Defense.cut_map`:
raw z, ``R z̃`` for a projection, the dense top-K map, the server 1×1 output), so the decoder and
critic depend on the cut's shape only, never on the defense: one attacker serves every defense of a
cut. The networks are the release's families, reduced as in the research notes §4.10.

Every attacker layer starts from Glorot-uniform weights and zero biases (Keras' default, which the
PyTorch port of the release reproduces).
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F


def glorot_(module: nn.Module) -> nn.Module:
    """Glorot-uniform weights and zero biases for every conv and linear layer of ``module``."""
    for layer in module.modules():
        if isinstance(layer, (nn.Conv2d, nn.ConvTranspose2d, nn.Linear)):
            nn.init.xavier_uniform_(layer.weight)
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)
    return module


class Pilot(nn.Module):
    """f̃: image in [-1, 1] → a ``(C, h, w)`` cut activation (the attack then passes it through its
    copy of the defense and reads its cut map, as it reads the client's payloads).

    Linear 3×3 convolutions as in the release's current pilot: stride 2 while the map is at least
    twice the cut's side, then one to the cut's channels; a bilinear resize to the cut's side where
    strides cannot reach it (28 → 14 → 12 for MnistNet split-2), and a ReLU: the benchmark's victims
    send post-ReLU activations, so a signed pilot space would be unreachable for the client (the
    release's ResNet cut is a signed residual sum; deviation). Two convolutions keep the pilot's
    receptive field (7 px at one stride) close to a shallow client's (MnistNet split-2: 6 px), as in
    the research notes' reduced variant (§4.10).

    Args:
        input_shape: ``(c, H, W)`` of the images.
        cut_shape: ``(C, h, w)`` of the victim's cut activation.
        width: channels of the hidden convolutions.
    """

    def __init__(self, input_shape: tuple[int, ...], cut_shape: tuple[int, int, int], width: int) -> None:
        super().__init__()
        c, height, wide = input_shape
        self.size = tuple(cut_shape[1:])
        strides = max(0, int(math.floor(math.log2(min(height / self.size[0], wide / self.size[1])))))
        layers = [nn.Conv2d(c if i == 0 else width, width, 3, stride=2, padding=1) for i in range(strides)]
        self.features = nn.Sequential(*layers)
        self.out = nn.Conv2d(width if strides else c, cut_shape[0], 3, padding=1)
        glorot_(self)

    def forward(self, x: Tensor) -> Tensor:
        h = self.out(self.features(x))
        if tuple(h.shape[-2:]) != self.size:
            h = F.interpolate(h, size=self.size, mode="bilinear", align_corners=False)
        return F.relu(h)


class Decoder(nn.Module):
    """f̃⁻¹ on a cut map: Conv3×3 → ReLU → ConvT3×3 (stride 2) → ReLU → Conv3×3 to the image
    channels → bilinear resize to the image side (24 → 28 for MnistNet split-2; resizing the
    one-channel output, not the hidden maps, halves the decoder's CPU time) → tanh (images in
    [-1, 1], as released)."""

    def __init__(self, cut_shape: tuple[int, int, int], input_shape: tuple[int, ...], width: int) -> None:
        super().__init__()
        self.size = tuple(input_shape[1:])
        self.net = nn.Sequential(
            nn.Conv2d(cut_shape[0], width, 3, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(width, width, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
            nn.Conv2d(width, input_shape[0], 3, padding=1),
        )
        glorot_(self)

    def forward(self, z: Tensor) -> Tensor:
        h = self.net(z)
        if tuple(h.shape[-2:]) != self.size:
            h = F.interpolate(h, size=self.size, mode="bilinear", align_corners=False)
        return torch.tanh(h)


class ResBlock(nn.Module):
    """The release's critic block without BatchNorm: ``x + conv(relu(conv(relu(x))))``."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.ReLU(), nn.Conv2d(width, width, 3, padding=1), nn.ReLU(), nn.Conv2d(width, width, 3, padding=1)
        )

    def forward(self, x: Tensor) -> Tensor:
        return x + self.body(x)


class Critic(nn.Module):
    """D on a cut map: Conv3×3 (stride 2) → ``blocks`` × ResBlock → Conv3×3 (stride 2) → Flatten →
    Linear → one score (research notes §4.10: downsample first)."""

    def __init__(self, cut_shape: tuple[int, int, int], width: int, blocks: int) -> None:
        super().__init__()
        h, w = (-(-cut_shape[1] // 4), -(-cut_shape[2] // 4))
        self.net = nn.Sequential(
            nn.Conv2d(cut_shape[0], width, 3, stride=2, padding=1),
            *(ResBlock(width) for _ in range(blocks)),
            nn.Conv2d(width, width, 3, stride=2, padding=1),
            nn.Flatten(1),
            nn.Linear(width * h * w, 1),
        )
        glorot_(self)

    def forward(self, z: Tensor) -> Tensor:
        return self.net(z)


def gradient_penalty(critic: nn.Module, real: Tensor, fake: Tensor, generator: torch.Generator) -> Tensor:
    """WGAN-GP: ``mean((‖∇D(x̂)‖₂ − 1)²)`` at ``x̂ = ε·real + (1−ε)·fake``, one ε ~ U(0, 1) per
    sample, the norm over each sample's whole flattened cut map (the PyTorch port's form; the TF
    release takes per-channel norms over the spatial axes, which is not used here)."""
    eps = torch.rand(len(real), *([1] * (real.dim() - 1)), generator=generator, dtype=real.dtype, device=generator.device).to(real.device)
    mix = (eps * real.detach() + (1 - eps) * fake.detach()).requires_grad_(True)
    (grad,) = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)
    norm = (grad.flatten(1).pow(2).sum(1) + 1e-12).sqrt()
    return (norm - 1).pow(2).mean()
