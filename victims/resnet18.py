"""CIFAR ResNet-18 with both cuts reshaped to the suite's 8×8×64 map (d = 4096).

The base network is the usual CIFAR ResNet-18: a 3×3 stem conv (64 channels, stride 1, no max pool)
with BatchNorm and ReLU, then four stages of two BasicBlocks, widths 64/128/256/512, strides
1/2/2/2, and a global-average-pool + Linear classifier.

The paper fixes both image cuts at d = 4096, an 8×8 map of 64 channels, which no stage boundary of
the plain network has. The heads therefore add stride-2 BasicBlocks (torchvision's block, with a
1×1 conv + BN projection shortcut) that bring the map down to 8×8×64:

* ``l1h``: stem → layer1 (64, 32×32) → BasicBlock(64→64, s2) → BasicBlock(64→64, s2)
  → (64, 8, 8).
* ``l2h`` (default): stem → layer1 → layer2 (128, 16×16) → BasicBlock(128→64, s2) → (64, 8, 8).

The backbone first lifts the 64 channels back to the width the next standard stage expects with a
1×1 conv + BN + ReLU (64→64 after ``l1h``, where layer2 takes 64; 64→128 after ``l2h``, where
layer3 takes 128), then runs the remaining standard stages. Each stage runs at the smaller of its
usual resolution and the 8×8 it receives, so a stage whose usual stride-2 would go from 16×16 to
8×8 gets stride 1 instead, and the network still ends at layer4's usual 4×4×512:

* after ``l1h``: layer2 (s1, 8×8) → layer3 (s1, 8×8) → layer4 (s2, 4×4);
* after ``l2h``: layer3 (s1, 8×8) → layer4 (s2, 4×4).

Tail: AdaptiveAvgPool2d(1) → flatten → Linear(512→classes).

Other choices: convolutions have no bias (BatchNorm follows each one); PyTorch's default
initialisation throughout, as in the common CIFAR ports; any ``(C, H, W)`` input is accepted, and
the 8×8 figures above are for the default ``(3, 32, 32)``.

Paper: He et al., "Deep Residual Learning for Image Recognition" (2016); LightSplit
(arXiv:2605.13265), Sect. V-A1, App. Table IV and App. B-B6 (CIFAR cut d = 4096 on an 8×8 grid).
"""
from __future__ import annotations

from collections import OrderedDict

from torch import nn

from victims.base import VICTIMS, SplitParts, Victim, dry_run_shape

_DEFAULT_INPUT = (3, 32, 32)
_CUT_CHANNELS = 64


# torchvision is imported where a network is built: importing it costs more than a stored grid's rerun.
def _block(in_channels: int, out_channels: int, stride: int) -> nn.Module:
    from torchvision.models.resnet import BasicBlock, conv1x1

    downsample = None
    if stride != 1 or in_channels != out_channels:
        downsample = nn.Sequential(conv1x1(in_channels, out_channels, stride), nn.BatchNorm2d(out_channels))
    return BasicBlock(in_channels, out_channels, stride, downsample)


def _stage(in_channels: int, out_channels: int, stride: int) -> nn.Sequential:
    return nn.Sequential(_block(in_channels, out_channels, stride), _block(out_channels, out_channels, 1))


def _conv_bn_relu(conv: nn.Conv2d) -> nn.Sequential:
    return nn.Sequential(conv, nn.BatchNorm2d(conv.out_channels), nn.ReLU())


def _head(cut: str, in_channels: int) -> nn.Sequential:
    from torchvision.models.resnet import conv3x3

    layers: list[tuple[str, nn.Module]] = [
        ("stem", _conv_bn_relu(conv3x3(in_channels, 64))),
        ("layer1", _stage(64, 64, 1)),
    ]
    if cut == "l1h":
        layers += [
            ("reduce1", _block(64, _CUT_CHANNELS, 2)),
            ("reduce2", _block(_CUT_CHANNELS, _CUT_CHANNELS, 2)),
        ]
    else:
        layers += [("layer2", _stage(64, 128, 2)), ("reduce", _block(128, _CUT_CHANNELS, 2))]
    return nn.Sequential(OrderedDict(layers))


def _backbone(cut: str) -> nn.Sequential:
    from torchvision.models.resnet import conv1x1

    if cut == "l1h":
        layers = [
            ("lift", _conv_bn_relu(conv1x1(_CUT_CHANNELS, 64))),
            ("layer2", _stage(64, 128, 1)),
            ("layer3", _stage(128, 256, 1)),
        ]
    else:
        layers = [
            ("lift", _conv_bn_relu(conv1x1(_CUT_CHANNELS, 128))),
            ("layer3", _stage(128, 256, 1)),
        ]
    layers.append(("layer4", _stage(256, 512, 2)))
    return nn.Sequential(OrderedDict(layers))


@VICTIMS.register("resnet18")
class ResNet18(Victim):
    """CIFAR ResNet-18 whose heads end in an 8×8×64 map (d = 4096) at both cuts."""

    cuts = {"l1h": (_CUT_CHANNELS, 8, 8), "l2h": (_CUT_CHANNELS, 8, 8)}  # a dry run checks them in the tests
    default_cut = "l2h"
    input_shape = _DEFAULT_INPUT
    datasets = ("cifar10", "cifar100")

    def build(self, *, cut: str, num_classes: int, input_shape: tuple[int, ...]) -> SplitParts:
        """Build freshly initialised parts split at ``cut``.

        Args:
            cut: ``"l1h"`` or ``"l2h"``.
            num_classes: width of the final Linear.
            input_shape: ``(C, H, W)`` of one input; 32×32 gives the 8×8 cut.

        Raises:
            ValueError: for an unknown cut or an input shape the network cannot take.
        """
        self.check_cut(cut)
        cut_shape = dry_run_shape("resnet18", lambda c: _head(cut, c), input_shape)
        tail = [
            ("avgpool", nn.AdaptiveAvgPool2d(1)),
            ("flatten", nn.Flatten(1)),
            ("fc", nn.Linear(512, num_classes)),
        ]
        return SplitParts(
            head=_head(cut, input_shape[0]),
            backbone=_backbone(cut),
            tail=nn.Sequential(OrderedDict(tail)),
            cut_shape=cut_shape,
        )
