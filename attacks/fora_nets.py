"""FORA's networks: the substitute client, the WGAN-GP critic and its gradient penalty.

Every network reads or emits cut-shaped maps (:meth:`defenses.base.Defense.cut_map`), so one set of
networks serves every defense of a cut.

Two substitute forms: :class:`SubstituteHead` follows the reduced-scale suggestion of the research
notes (§2.10), so the attack runs on a 2-core CPU; :class:`VGGSubstituteHead` is the released one
(``FORA/model.py``: VGG-16-BN blocks against a MobileNet victim), used by the ``paper`` profile. The
critic takes the released layout at any width and depth (released: 128 wide, six 256-channel
residual blocks). What is kept in every form is the role of each network: a substitute of a
*different* architecture that ends at the cut shape, a critic without BatchNorm (gradient penalties
are per sample), and a full-flatten per-sample penalty.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attacks.view import AttackerClientPath


def substitute_strides(input_hw: tuple[int, int], cut_hw: tuple[int, int]) -> tuple[int, int]:
    """Strides of the substitute's two convolutions for an ``input_hw`` → ``cut_hw`` reduction.

    The whole reduction factor ``f = ⌊min(H/h, W/w)⌋`` (at least 1) is split as the first conv's
    stride ``s₁ = min(2, f)`` and the second's ``s₂ = ⌊f / s₁⌋``, so the full-resolution conv is
    strided (4× cheaper on a CPU): MnistNet 28 → 12 and 28 → 8 give (2, 1), 32 → 8 and 28 → 7 give
    (2, 2), 64 → 8 gives (2, 4). Any remaining mismatch (14 → 12, 14 → 8) is closed by an adaptive
    average pool (see :class:`SubstituteHead`).
    """
    factor = max(1, min(input_hw[0] // cut_hw[0], input_hw[1] // cut_hw[1]))
    first = min(2, factor)
    return first, max(1, factor // first)


def _conv(in_channels: int, out_channels: int, stride: int) -> nn.Conv2d:
    """A 'same'-style conv whose kernel covers its stride: output side ``⌈side / stride⌉``."""
    kernel = 2 * math.ceil(stride / 2) + 1
    return nn.Conv2d(in_channels, out_channels, kernel, stride=stride, padding=kernel // 2)


def _landing_conv(
    in_channels: int, out_channels: int, stride: int, in_hw: tuple[int, int], out_hw: tuple[int, int]
) -> nn.Conv2d:
    """A conv that maps ``in_hw`` to ``out_hw`` exactly where a kernel of 3, 5 or 7 (at least the stride)
    and some padding can (14 → 12: 3×3 without padding; 14 → 8: 7×7 without padding), else :func:`_conv`."""
    for kernel in (k for k in (3, 5, 7) if k >= stride):
        for padding in range(kernel // 2, -1, -1):
            if all((n + 2 * padding - kernel) // stride + 1 == m for n, m in zip(in_hw, out_hw)):
                return nn.Conv2d(in_channels, out_channels, kernel, stride=stride, padding=padding)
    return _conv(in_channels, out_channels, stride)


class SubstituteHead(nn.Module):
    """The attacker's stand-in for the unknown client head: input ``(c, H, W)`` → cut ``(C, h, w)``.

    ``Conv(c→width, s₁) + BN + ReLU → Conv(width→C, s₂) [→ adaptive average pool to (h, w)] + BN +
    ReLU``, strides from :func:`substitute_strides`; the first conv is 'same'-padded, the second's
    kernel (3, 5 or 7) and padding are chosen to land on ``(h, w)`` exactly, and only where none does
    an adaptive average pool closes the gap. Deliberately unlike MnistNet's head (5×5 conv, ReLU,
    max-pool, no BatchNorm), as FORA's VGG substitute is unlike its MobileNet victim.

    Args:
        input_shape: ``(c, H, W)`` of the images.
        cut_shape: ``(C, h, w)`` of the victim's cut activation.
        width: channels of the first convolution.

    Raises:
        ValueError: unless both shapes are ``(C, H, W)``.
    """

    def __init__(self, input_shape: tuple[int, ...], cut_shape: tuple[int, ...], width: int = 16) -> None:
        super().__init__()
        if len(input_shape) != 3 or len(cut_shape) != 3:
            raise ValueError(f"FORA substitute: need (C, H, W) input and cut shapes, got {input_shape}, {cut_shape}")
        first, second = substitute_strides(tuple(input_shape[1:]), tuple(cut_shape[1:]))
        self.cut_hw = tuple(cut_shape[1:])
        mid_hw = tuple(math.ceil(n / first) for n in input_shape[1:])
        self.body = nn.Sequential(
            _conv(input_shape[0], width, first), nn.BatchNorm2d(width), nn.ReLU(),
            _landing_conv(width, cut_shape[0], second, mid_hw, self.cut_hw),
        )
        self.out = nn.Sequential(nn.BatchNorm2d(cut_shape[0]), nn.ReLU())

    def forward(self, x: Tensor) -> Tensor:
        z = self.body(x)
        if tuple(z.shape[-2:]) != self.cut_hw:
            z = F.adaptive_avg_pool2d(z, self.cut_hw)
        return self.out(z)


class VGGSubstituteHead(nn.Module):
    """The released substitute's form (VGG-16-BN client part, ``FORA/model.py`` ``vgg16(level)``),
    sized by the cut: input ``(c, H, W)`` → cut ``(C, h, w)``.

    ``k = max(0, ⌊log2(min(H/h, W/w))⌋)`` blocks of ``[Conv3×3 + BN + ReLU] × 2 → MaxPool2``, the
    width doubling per block and the last block ``C`` wide (block ``i`` of ``k``: ``C / 2^(k−1−i)``,
    at least 1); where the blocks do not end at the cut, a landing Conv + BN + ReLU closes the gap
    (kernel and padding as in :class:`SubstituteHead`, an adaptive average pool where none lands).
    At the release's cuts this is its layout exactly: CIFAR 32×32 → (32, 16, 16) ``[32, 32, M]``,
    → (64, 16, 16) ``[64, 64, M]``, → (128, 8, 8) ``[64, 64, M, 128, 128, M]``. Unlike the victim
    MobileNet (strided depthwise convolutions, no pooling), as the release intends.

    Args:
        input_shape: ``(c, H, W)`` of the images.
        cut_shape: ``(C, h, w)`` of the victim's cut activation.

    Raises:
        ValueError: unless both shapes are ``(C, H, W)``.
    """

    def __init__(self, input_shape: tuple[int, ...], cut_shape: tuple[int, ...]) -> None:
        super().__init__()
        if len(input_shape) != 3 or len(cut_shape) != 3:
            raise ValueError(f"FORA substitute: need (C, H, W) input and cut shapes, got {input_shape}, {cut_shape}")
        self.cut_hw = tuple(cut_shape[1:])
        factor = min(input_shape[1] / cut_shape[1], input_shape[2] / cut_shape[2])
        n_blocks = max(0, math.floor(math.log2(factor))) if factor >= 1 else 0
        layers: list[nn.Module] = []
        channels, hw = input_shape[0], tuple(input_shape[1:])
        for i in range(n_blocks):
            width = max(1, cut_shape[0] // 2 ** (n_blocks - 1 - i))
            layers += [nn.Conv2d(channels, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
                       nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2)]
            channels, hw = width, tuple(n // 2 for n in hw)
        if channels != cut_shape[0] or hw != self.cut_hw:
            layers += [_landing_conv(channels, cut_shape[0], 1, hw, self.cut_hw), nn.BatchNorm2d(cut_shape[0]), nn.ReLU()]
        self.body = nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        z = self.body(x)
        if tuple(z.shape[-2:]) != self.cut_hw:
            z = F.adaptive_avg_pool2d(z, self.cut_hw)
        return z


SUBSTITUTE_FORMS = ("conv", "vgg")  # FORAConfig.substitute: SubstituteHead, VGGSubstituteHead


def substitute_head(form: str, input_shape: tuple[int, ...], cut_shape: tuple[int, ...], width: int) -> nn.Module:
    """The substitute head of ``form`` (``conv``: :class:`SubstituteHead` of ``width``; ``vgg``:
    :class:`VGGSubstituteHead`, sized by the cut).

    Raises:
        ValueError: for an unknown form or shapes the head cannot take.
    """
    if form == "conv":
        return SubstituteHead(input_shape, cut_shape, width)
    if form == "vgg":
        return VGGSubstituteHead(input_shape, cut_shape)
    raise ValueError(f"FORA substitute: form must be one of {', '.join(SUBSTITUTE_FORMS)}, got '{form}'")


class Substitute(AttackerClientPath):
    """Substitute client path: the substitute head, then the attacker's copy of the defense
    (``view.defense_factory()``), run as an attacker simulates it (straight-through top-K, DP noise
    with the trained clip); :meth:`cut_map` gives its payloads' public cut maps, differentiably."""

    def trainable(self) -> list[nn.Parameter]:
        """The head's parameters and the encoder's client half (e.g. a learned 1×1); never the server half."""
        return list(self.head.parameters()) + list(self.defense.client_parameters())


class _ResBlock(nn.Module):
    """Pre-activation residual block without BatchNorm: ``x + conv(relu(conv(relu(x))))``."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.ReLU(), nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(), nn.Conv2d(channels, channels, 3, padding=1),
        )

    def forward(self, x: Tensor) -> Tensor:
        return x + self.body(x)


class ConvCritic(nn.Module):
    """WGAN critic of a ``(C, h, w)`` cut map, FORA's shallow-cut layout at reduced width.

    ``Conv(C→w, s2) → ReLU → Conv(w→2w, s2) → blocks × ResBlock(2w) → Conv(2w→2w, s2) → Flatten →
    Linear(→1)`` (released: w = 128, six blocks, a Linear hard-wired to a 2×2 map; here the Linear
    takes whatever map the input size leaves).
    """

    def __init__(self, in_shape: tuple[int, int, int], width: int = 32, blocks: int = 1) -> None:
        super().__init__()
        channels, h, w = in_shape
        self.features = nn.Sequential(
            nn.Conv2d(channels, width, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1),
            *[_ResBlock(2 * width) for _ in range(blocks)],
            nn.Conv2d(2 * width, 2 * width, 3, stride=2, padding=1), nn.Flatten(),
        )
        for _ in range(3):
            h, w = math.ceil(h / 2), math.ceil(w / 2)
        self.score = nn.Linear(2 * width * h * w, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.score(self.features(x)).view(-1)


def gradient_penalty(
    critic: nn.Module, a: Tensor, b: Tensor, *, weight: float, generator: torch.Generator | None = None
) -> Tensor:
    """WGAN-GP penalty ``weight · mean_i (‖∇D(x̃_i)‖₂ − 1)²`` at ``x̃_i = ε_i a_i + (1 − ε_i) b_i``.

    One uniform ``ε_i`` per sample; the norm is over the whole flattened sample (released FORA,
    unlike FSHA's per-channel norm). ``create_graph=True``, so the penalty trains the critic.
    """
    shape = (a.shape[0],) + (1,) * (a.dim() - 1)
    eps = torch.rand(shape, generator=generator, dtype=a.dtype, device=generator.device).to(a.device)
    mixed = (eps * a.detach() + (1 - eps) * b.detach()).requires_grad_(True)
    (grad,) = torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)
    return weight * (grad.flatten(1).norm(dim=1) - 1).pow(2).mean()
