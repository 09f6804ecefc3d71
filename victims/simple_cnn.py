"""SimpleCNN: a small VGG-style CNN for Fashion-MNIST with two cuts, L1H and L2H.

The paper names a Fashion-MNIST victim but not its layers, so this is a standard small CNN of four
3×3 conv blocks (conv → BN → ReLU, "same" padding) and two 2×2 max pools::

    block1 conv(C→32)   block2 conv(32→32)   pool1   → cut ``l1h``: (32, 14, 14), d = 6272
    block3 conv(32→64)  pool2                        → cut ``l2h``: (64, 7, 7),   d = 3136 (default)
    block4 conv(64→64)                               → backbone ends here
    tail: AdaptiveAvgPool2d(1) → flatten → Linear(64→classes)

Choices the sources leave unstated, besides the layers themselves:

* Convolutions have no bias: the BatchNorm that follows each one has its own shift.
* PyTorch's default initialisation throughout.
* The global average pool makes the tail independent of the input size, so any ``(C, H, W)`` with
  H, W ≥ 4 is accepted; the shapes above are for the default ``(1, 28, 28)``.
* The layers are created in model order whatever the cut, so one seed gives the same weights at
  both cuts.

On 32×32 RGB input (``cifar10-jpeg``) the L2H cut is (64, 8, 8), d = 4096: the shape of the paper's
CIFAR-10 cut, which is why it is the cpu profile's CIFAR-10 victim (``benchmarks/cifar_victims.py``
compares it with ResNet-18 at the same cut for accuracy per minute).

Paper: LightSplit (arXiv:2605.13265), Sect. V-A1 and App. Table IV (Fashion-MNIST, L1H / L2H).
"""
from __future__ import annotations

from collections import OrderedDict

from torch import nn

from victims.base import VICTIMS, SplitParts, Victim, dry_run_shape

_DEFAULT_INPUT = (1, 28, 28)
_WIDTH = (32, 32, 64, 64)
# Number of feature layers the client head holds at each cut (3 per conv block, 1 per pool).
_HEAD_DEPTH = {"l1h": 7, "l2h": 11}


def _block(index: int, in_channels: int, out_channels: int) -> list[tuple[str, nn.Module]]:
    return [
        (f"conv{index}", nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)),
        (f"bn{index}", nn.BatchNorm2d(out_channels)),
        (f"relu{index}", nn.ReLU()),
    ]


def _features(in_channels: int) -> list[tuple[str, nn.Module]]:
    c1, c2, c3, c4 = _WIDTH
    return [
        *_block(1, in_channels, c1),
        *_block(2, c1, c2),
        ("pool1", nn.MaxPool2d(2)),
        *_block(3, c2, c3),
        ("pool2", nn.MaxPool2d(2)),
        *_block(4, c3, c4),
    ]


def _cut_shape(cut: str, input_shape: tuple[int, ...]) -> tuple[int, ...]:
    """Per-sample head output shape at ``cut`` for ``input_shape``, from a dry run on meta tensors.

    Raises:
        ValueError: for an input that is not ``(C, H, W)`` or is too small for the two pools.
    """
    if len(input_shape) == 3 and min(input_shape[1:]) < 4:
        raise ValueError(f"simplecnn needs H, W >= 4 for its two 2x2 pools, got {input_shape}")
    return dry_run_shape("simplecnn", lambda c: nn.Sequential(OrderedDict(_features(c)[: _HEAD_DEPTH[cut]])), input_shape)


@VICTIMS.register("simplecnn")
class SimpleCNN(Victim):
    """Four conv-BN-ReLU blocks with two max pools; cut after pool1 (L1H) or pool2 (L2H)."""

    cuts = {"l1h": (32, 14, 14), "l2h": (64, 7, 7)}  # a dry run checks them in the tests
    default_cut = "l2h"
    input_shape = _DEFAULT_INPUT
    datasets = ("fashion-mnist", "cifar10-jpeg")

    def build(self, *, cut: str, num_classes: int, input_shape: tuple[int, ...]) -> SplitParts:
        """Build freshly initialised parts split at ``cut``.

        Args:
            cut: ``"l1h"`` or ``"l2h"``.
            num_classes: width of the final Linear.
            input_shape: ``(C, H, W)`` of one input, H, W ≥ 4.

        Raises:
            ValueError: for an unknown cut or an input shape the network cannot take.
        """
        self.check_cut(cut)
        cut_shape = _cut_shape(cut, input_shape)
        layers = _features(input_shape[0])
        depth = _HEAD_DEPTH[cut]
        tail = [
            ("avgpool", nn.AdaptiveAvgPool2d(1)),
            ("flatten", nn.Flatten(1)),
            ("fc", nn.Linear(_WIDTH[-1], num_classes)),
        ]
        return SplitParts(
            head=nn.Sequential(OrderedDict(layers[:depth])),
            backbone=nn.Sequential(OrderedDict(layers[depth:])),
            tail=nn.Sequential(OrderedDict(tail)),
            cut_shape=cut_shape,
        )
