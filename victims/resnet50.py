"""ImageNet ResNet-50 (torchvision) with one L1H cut pooled to an 8×8×64 map (d = 4096).

The paper: "Every client runs the same head: one extra residual block past the L1H cut, pooled to
an 8×8×64 map, so the cut stays d = 4096 and matches the CIFAR cut." Built from torchvision's
``resnet50(weights=None)``; pretrained weights are never loaded.

* Head: conv1 → bn1 → relu → maxpool → layer1 (256 channels, at H/4 × W/4) → one extra torchvision
  Bottleneck 256→64 → AdaptiveAvgPool2d(8), giving the cut ``l1h``: (64, 8, 8).
* Backbone: a 1×1 conv 64→256 + BN + ReLU (back to the width layer2 expects), then layer2,
  layer3, layer4 unchanged (their strides apply to the 8×8 map: 4×4, 2×2, 1×1).
* Tail: avgpool → flatten → fc (2048→classes).

Choices the paper leaves unstated:

* The extra block is a Bottleneck with inner width 64, the width of layer1's own blocks
  (1×1 256→64, 3×3 64→64, 1×1 64→64, stride 1), with a 1×1 conv + BN projection shortcut
  256→64. torchvision's Bottleneck expands its output by 4, so it is built as
  ``Bottleneck(256, 16, base_width=256)``: output 16·4 = 64, inner width 16·256/64 = 64.
* The extra block and the lift conv are initialised as torchvision initialises the rest of the
  network (Kaiming-normal fan-out for convs, BN weight 1 and bias 0).
* Inputs: RGB ``(3, H, W)`` with H, W ≥ 32, so that layer1's map (H/4 rounded up) is at least
  8×8 and the pool only averages; the default is the suite's in-memory 64×64 ImageNet, where
  layer1 is 16×16.

Paper: He et al., "Deep Residual Learning for Image Recognition" (2016); LightSplit
(arXiv:2605.13265), App. B-B2 (ImageNet-1k).
"""
from __future__ import annotations

from collections import OrderedDict

from torch import nn

from victims.base import VICTIMS, SplitParts, Victim

_CUT_SHAPE = (64, 8, 8)
_MIN_SIZE = 32  # the stem downsamples by 4; layer1 must be at least 8×8 for the pool


def _init_like_torchvision(module: nn.Module) -> None:
    for m in module.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)


def _check_input(input_shape: tuple[int, ...]) -> None:
    if len(input_shape) != 3 or input_shape[0] != 3:
        raise ValueError(f"resnet50 needs an RGB (3, H, W) input shape, got {input_shape}")
    if min(input_shape[1:]) < _MIN_SIZE:
        raise ValueError(f"resnet50 needs H, W >= {_MIN_SIZE} for its 8x8 cut, got {input_shape}")


@VICTIMS.register("resnet50")
class ResNet50(Victim):
    """torchvision ResNet-50 cut after layer1 plus one extra block, pooled to 8×8×64."""

    cuts = {"l1h": _CUT_SHAPE}
    default_cut = "l1h"
    input_shape = (3, 64, 64)
    datasets = ("imagenet",)

    def build(self, *, cut: str, num_classes: int, input_shape: tuple[int, ...]) -> SplitParts:
        """Build freshly initialised parts split at ``cut``.

        Args:
            cut: ``"l1h"``.
            num_classes: width of fc (1000 for ImageNet-1k).
            input_shape: ``(3, H, W)`` of one input, H, W ≥ 32.

        Raises:
            ValueError: for an unknown cut or an input shape the network cannot take.
        """
        from torchvision.models import resnet50  # imported here: a stored grid's rerun needs no torchvision
        from torchvision.models.resnet import Bottleneck, conv1x1

        self.check_cut(cut)
        _check_input(input_shape)
        net = resnet50(weights=None, num_classes=num_classes)
        shortcut = nn.Sequential(conv1x1(256, 64), nn.BatchNorm2d(64))
        extra = Bottleneck(256, 16, downsample=shortcut, base_width=256)
        lift = nn.Sequential(conv1x1(64, 256), nn.BatchNorm2d(256), nn.ReLU())
        _init_like_torchvision(extra)
        _init_like_torchvision(lift)
        head = nn.Sequential(
            OrderedDict(
                conv1=net.conv1,
                bn1=net.bn1,
                relu=net.relu,
                maxpool=net.maxpool,
                layer1=net.layer1,
                extra=extra,
                pool=nn.AdaptiveAvgPool2d(_CUT_SHAPE[1:]),
            )
        )
        backbone = nn.Sequential(
            OrderedDict(lift=lift, layer2=net.layer2, layer3=net.layer3, layer4=net.layer4)
        )
        tail = nn.Sequential(OrderedDict(avgpool=net.avgpool, flatten=nn.Flatten(1), fc=net.fc))
        return SplitParts(head=head, backbone=backbone, tail=tail, cut_shape=_CUT_SHAPE)
