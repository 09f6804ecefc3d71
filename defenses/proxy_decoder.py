"""The client's proxy inversion decoder: the adversary that adversarial-learning defenses train against.

ResSFL (``zlijingtao/ResSFL``) and DISCO (SIMBA ``aidecentralized/InferenceBenchmark``) both let the
client train a decoder from what it sends back to the input, and train the client to defeat it. One
decoder serves both here: ResSFL's residual decoder (its ``res_normN`` family; the released
training runs use ``res_normN4C64``: 64 channels, 4 middle blocks), reshaped to any cut and input.
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import piq
import torch
from torch import Tensor, nn
from torch.nn import functional as F

from bench.knobs import Knob
from defenses.base import DefenseConfigError

PROXY_WIDTH = Knob("proxy_width", int, default=64, minimum=1,
                   help="channels of the client's proxy decoder blocks (ResSFL res_normN4C64: 64)")
PROXY_BLOCKS = Knob("proxy_blocks", int, default=4, minimum=0,
                    help="middle blocks of the client's proxy decoder (ResSFL res_normN4C64: 4)")
SSIM_KERNEL = 11  # piq.ssim's Gaussian window; smaller images are zero-padded up to it


class PreActivationBlock(nn.Module):
    """A residual block: BN → ReLU → conv3×3 → BN → ReLU → conv3×3, added to a shortcut of the
    un-normalised input (a 1×1 conv + BN where the channel count changes), as in ResSFL's decoder."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.residual = nn.Sequential(
            nn.BatchNorm2d(in_channels), nn.ReLU(),
            nn.Conv2d(in_channels, out_channels, 3, padding=1), nn.BatchNorm2d(out_channels), nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1),
        )
        self.shortcut: nn.Module = nn.Identity()
        if in_channels != out_channels:
            self.shortcut = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False), nn.BatchNorm2d(out_channels))

    def forward(self, x: Tensor) -> Tensor:
        return self.residual(x) + self.shortcut(x)


class ResidualImageDecoder(nn.Module):
    """A ``(C, h, w)`` map → a ``(c, H, W)`` image in [0, 1].

    A block C→width, ``blocks`` blocks at the cut's resolution, then two stages that each double the
    resolution (stride-2 transposed conv + BN) while the image is at least twice as large, or else
    add a block, then further doublings while they fit; a bilinear resize to the exact image size
    (ResSFL's decoder only doubles: MNIST's 12→28 is not a power of two); a block width→c and a
    sigmoid.

    Args:
        in_shape: ``(C, h, w)`` of the map.
        out_shape: ``(c, H, W)`` of the image.
        width: channels of the inner blocks (ResSFL's ``internal_nc``).
        blocks: middle blocks at the cut's resolution (ResSFL's ``N``).
    """

    def __init__(self, in_shape: tuple[int, ...], out_shape: tuple[int, ...], *, width: int = 64, blocks: int = 4) -> None:
        super().__init__()
        self.out_size = tuple(out_shape[1:])
        doublings = int(math.log2(max(1, min(out_shape[1] // in_shape[1], out_shape[2] // in_shape[2]))))
        layers: list[nn.Module] = [PreActivationBlock(in_shape[0], width), nn.ReLU()]
        for _ in range(blocks):
            layers += [PreActivationBlock(width, width), nn.ReLU()]
        for stage in range(max(2, doublings)):
            if stage < doublings:
                layers += [nn.ConvTranspose2d(width, width, 3, stride=2, padding=1, output_padding=1), nn.BatchNorm2d(width)]
            else:
                layers.append(PreActivationBlock(width, width))
            layers.append(nn.ReLU())
        self.body = nn.Sequential(*layers)
        self.head = PreActivationBlock(width, out_shape[0])

    def forward(self, z: Tensor) -> Tensor:
        h = self.body(z)
        if tuple(h.shape[-2:]) != self.out_size:
            h = F.interpolate(h, size=self.out_size, mode="bilinear", align_corners=False)
        return torch.sigmoid(self.head(h))


class MLPDecoder(nn.Module):
    """A flat map → a flat reconstruction (Linear → ReLU → Linear → ReLU → Linear), reshaped to the
    input; a sigmoid output for images (in [0, 1]), a linear one for tabular features (unbounded)."""

    def __init__(self, in_shape: tuple[int, ...], out_shape: tuple[int, ...], *, hidden: int = 256) -> None:
        super().__init__()
        self.out_shape = tuple(out_shape)
        self.bounded = len(out_shape) == 3
        self.net = nn.Sequential(
            nn.Linear(math.prod(in_shape), hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, math.prod(out_shape)),
        )

    def forward(self, z: Tensor) -> Tensor:
        out = self.net(z.flatten(1)).view(-1, *self.out_shape)
        return torch.sigmoid(out) if self.bounded else out


def proxy_decoder(in_shape: tuple[int, ...], out_shape: tuple[int, ...], *, width: int = 64, blocks: int = 4) -> nn.Module:
    """The proxy decoder from a map of ``in_shape`` to an input of ``out_shape``: the residual image
    decoder between two ``C×H×W`` shapes, an MLP (hidden ``4·width``) otherwise (vector cuts, tabular inputs).
    ``width`` and ``blocks`` are checked against :data:`PROXY_WIDTH` and :data:`PROXY_BLOCKS`."""
    width, blocks = PROXY_WIDTH.check(width), PROXY_BLOCKS.check(blocks)
    if len(in_shape) == 3 and len(out_shape) == 3:
        return ResidualImageDecoder(in_shape, out_shape, width=width, blocks=blocks)
    return MLPDecoder(in_shape, out_shape, hidden=4 * width)


def is_image(shape: tuple[int, ...]) -> bool:
    return len(shape) == 3


def mean_ssim(recon: Tensor, truth: Tensor) -> Tensor:
    """Differentiable SSIM of ``(N, C, H, W)`` images in [0, 1], averaged over the batch (piq's
    Gaussian 11×11 window, σ 1.5, as ResSFL's ``pytorch_ssim``; piq skips the border instead of
    zero-padding it). Images under 11 px a side are zero-padded, both alike."""
    pad_h, pad_w = max(0, SSIM_KERNEL - truth.shape[-2]), max(0, SSIM_KERNEL - truth.shape[-1])
    if pad_h or pad_w:
        sides = (pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2)
        recon, truth = F.pad(recon, sides), F.pad(truth, sides)
    return piq.ssim(recon, truth, data_range=1.0, reduction="mean")


def check_inputs(name: str, payload_rows: int, inputs: Tensor) -> None:
    """Refuse inputs a proxy decoder cannot reconstruct: token ids, or rows that are not the payload's."""
    if not inputs.is_floating_point() or inputs.shape[0] != payload_rows:
        raise DefenseConfigError(f"{name}: the proxy decoder reconstructs one float input per payload row (no token cuts)")


@contextlib.contextmanager
def evaluating(module: nn.Module) -> Iterator[nn.Module]:
    """``module`` in evaluation mode (BatchNorm on running statistics) for the block, then as it was."""
    was_training = module.training
    module.eval()
    try:
        yield module
    finally:
        module.train(was_training)
