"""MicronNet: the compact traffic-sign CNN of Wong et al. (2018), for GTSRB at 32×32.

Layers (each conv and the hidden fc followed by BatchNorm and ReLU)::

    conv1 1×1 (C→1)                       32×32   learned colour → grey map
    conv2 5×5 (1→29), padding 2           32×32
    pool1 max 3×3, stride 2, padding 1    16×16   → cut ``l1h``: (29, 16, 16), d = 7424 (default)
    conv3 3×3 (29→59), padding 1          16×16
    pool2 max 3×3, stride 2, padding 1     8×8    → cut ``l2h``: (59, 8, 8),   d = 3776
    conv4 3×3 (59→74), padding 1           8×8
    pool3 max 3×3, stride 2, padding 1     4×4
    flatten → fc1 (1184→300) → BN → ReLU          → backbone ends here
    tail: fc2 (300→classes)

Choices the sources leave unstated:

* Padding. MicronNet was designed for 48×48 inputs with unpadded convolutions. At 32×32 we pad
  every conv to keep its size ("same") and give each pool padding 1, so every pool halves the map:
  32 → 16 → 8 → 4. fc1 then sees 74·4·4 = 1184 inputs, the same width as the original at 48×48.
* Convolutions and fc1 have no bias: the BatchNorm that follows each one has its own shift.
* PyTorch's default initialisation throughout.
* Other input sizes are accepted; fc1's width is the flattened pool3 output for that size. The cut
  shapes (the ``cuts`` table and :attr:`SplitParts.cut_shape`) come from a dry run of the head on
  meta tensors, never from hand arithmetic.
* The layers are created in model order whatever the cut, so one seed gives the same weights at
  both cuts.

Paper: Wong, Shafiee & Jules, "MicronNet: A Highly Compact Deep Convolutional Neural Network
Architecture for Real-time Embedded Traffic Sign Classification" (arXiv:1804.00497); LightSplit
(arXiv:2605.13265), Sect. V-A1 and App. Table IV (GTSRB, L1H / L2H).
"""
from __future__ import annotations

import math
from collections import OrderedDict

from torch import nn

from victims.base import VICTIMS, SplitParts, Victim, dry_run_shape

_DEFAULT_INPUT = (3, 32, 32)
_HIDDEN = 300
# Number of feature layers the client head holds at each cut (3 per conv block, 1 per pool).
_HEAD_DEPTH = {"l1h": 7, "l2h": 11}
_FEATURE_DEPTH = 16  # through pool3, before flatten


def _block(index: int, in_channels: int, out_channels: int, kernel: int) -> list[tuple[str, nn.Module]]:
    return [
        (f"conv{index}", nn.Conv2d(in_channels, out_channels, kernel, padding=kernel // 2, bias=False)),
        (f"bn{index}", nn.BatchNorm2d(out_channels)),
        (f"relu{index}", nn.ReLU()),
    ]


def _pool(index: int) -> tuple[str, nn.Module]:
    return f"pool{index}", nn.MaxPool2d(3, stride=2, padding=1)


def _features(in_channels: int) -> list[tuple[str, nn.Module]]:
    return [
        *_block(1, in_channels, 1, 1),
        *_block(2, 1, 29, 5),
        _pool(1),
        *_block(3, 29, 59, 3),
        _pool(2),
        *_block(4, 59, 74, 3),
        _pool(3),
    ]


def _shape_after(depth: int, input_shape: tuple[int, ...]) -> tuple[int, ...]:
    """Per-sample shape after the first ``depth`` feature layers (:func:`~victims.base.dry_run_shape`)."""
    return dry_run_shape("micronnet", lambda c: nn.Sequential(OrderedDict(_features(c)[:depth])), input_shape)


@VICTIMS.register("micronnet")
class MicronNet(Victim):
    """MicronNet with "same"-padded convs; cut after pool1 (L1H) or pool2 (L2H)."""

    cuts = {"l1h": (29, 16, 16), "l2h": (59, 8, 8)}  # a dry run checks them in the tests
    default_cut = "l1h"
    input_shape = _DEFAULT_INPUT
    datasets = ("gtsrb",)

    def build(self, *, cut: str, num_classes: int, input_shape: tuple[int, ...]) -> SplitParts:
        """Build freshly initialised parts split at ``cut``.

        Args:
            cut: ``"l1h"`` or ``"l2h"``.
            num_classes: width of fc2 (43 for GTSRB).
            input_shape: ``(C, H, W)`` of one input; 32×32 gives fc1 its 1184 inputs.

        Raises:
            ValueError: for an unknown cut or an input shape the network cannot take.
        """
        self.check_cut(cut)
        depth = _HEAD_DEPTH[cut]
        cut_shape = _shape_after(depth, input_shape)
        flat_dim = math.prod(_shape_after(_FEATURE_DEPTH, input_shape))
        layers = _features(input_shape[0]) + [
            ("flatten", nn.Flatten(1)),
            ("fc1", nn.Linear(flat_dim, _HIDDEN, bias=False)),
            ("bn5", nn.BatchNorm1d(_HIDDEN)),
            ("relu5", nn.ReLU()),
        ]
        return SplitParts(
            head=nn.Sequential(OrderedDict(layers[:depth])),
            backbone=nn.Sequential(OrderedDict(layers[depth:])),
            tail=nn.Sequential(OrderedDict([("fc2", nn.Linear(_HIDDEN, num_classes))])),
            cut_shape=cut_shape,
        )
