"""The CIFAR MobileNet that FORA's release attacks (``cifar_mobilenet`` of X1aoyangXu/FORA, ``FORA/model.py``).

MobileNet v1 blocks on 32×32 input; ``conv_bn`` = Conv3×3 (no bias) + BN + ReLU, ``conv_dw`` =
depthwise Conv3×3 (groups = C, no bias) + BN + ReLU → pointwise Conv1×1 (no bias) + BN + ReLU::

    conv_bn(3→32, s2)                           → cut ``l1``: (32, 16, 16)
    conv_dw(32→64, s1)                          → cut ``l2``: (64, 16, 16), the release's (default)
    conv_dw(64→128, s2), conv_dw(128→128)       → cut ``l3``: (128, 8, 8)
    conv_dw(128→256, s2), conv_dw(256→256), conv_dw(256→512, s2), 5 × conv_dw(512→512),
    conv_dw(512→1024, s2), conv_dw(1024→1024)   → backbone ends here (1024, 1, 1)
    tail: AdaptiveAvgPool2d(1) → flatten → Linear(1024→classes)

The release pools with ``AvgPool2d(1)`` on the 1×1 map; the adaptive pool is the same there and
lets other input sizes through. PyTorch's default initialisation, as released.

It is the default victim of no dataset (``datasets = ()``): a grid names it (``victim = "mobilenet"``),
so the suite's CIFAR-10 rows keep SimpleCNN and ResNet-18.

Paper: Xu et al., "A Stealthy Wrongdoer: Feature-Oriented Reconstruction Attack against Split
Learning", CVPR 2024 (victim of the released code, level 2); Howard et al., "MobileNets" (2017).
"""
from __future__ import annotations

from torch import nn

from victims.base import VICTIMS, SplitParts, Victim, dry_run_shape

_DEFAULT_INPUT = (3, 32, 32)
# (out channels, stride) of each layer after conv_bn(3→32, s2): the released cfg.
_DW = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), *((512, 1),) * 5, (1024, 2), (1024, 1))
# Layers the client head holds at each cut (the release's ``level``: 1, 2, 3 → 1, 2, 4 layers).
_HEAD_DEPTH = {"l1": 1, "l2": 2, "l3": 4}


def _conv_bn(in_channels: int, out_channels: int, stride: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False), nn.BatchNorm2d(out_channels), nn.ReLU()
    )


def _conv_dw(in_channels: int, out_channels: int, stride: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(in_channels, in_channels, 3, stride, 1, groups=in_channels, bias=False),
        nn.BatchNorm2d(in_channels), nn.ReLU(),
        nn.Conv2d(in_channels, out_channels, 1, 1, 0, bias=False), nn.BatchNorm2d(out_channels), nn.ReLU(),
    )


def _layers(in_channels: int) -> list[nn.Module]:
    layers, channels = [_conv_bn(in_channels, 32, 2)], 32
    for out_channels, stride in _DW:
        layers.append(_conv_dw(channels, out_channels, stride))
        channels = out_channels
    return layers


@VICTIMS.register("mobilenet")
class MobileNet(Victim):
    """FORA's released CIFAR MobileNet; cut after its first one, two or four layers."""

    cuts = {"l1": (32, 16, 16), "l2": (64, 16, 16), "l3": (128, 8, 8)}  # a dry run checks them in the tests
    default_cut = "l2"
    input_shape = _DEFAULT_INPUT
    datasets = ()

    def build(self, *, cut: str, num_classes: int, input_shape: tuple[int, ...]) -> SplitParts:
        """Build freshly initialised parts split at ``cut``.

        Args:
            cut: ``"l1"``, ``"l2"`` or ``"l3"``.
            num_classes: width of the final Linear.
            input_shape: ``(C, H, W)`` of one input; 32×32 gives the shapes above.

        Raises:
            ValueError: for an unknown cut or an input shape the network cannot take.
        """
        self.check_cut(cut)
        cut_shape = dry_run_shape("mobilenet", lambda c: nn.Sequential(*_layers(c)[: _HEAD_DEPTH[cut]]), input_shape)
        layers, depth = _layers(input_shape[0]), _HEAD_DEPTH[cut]
        return SplitParts(
            head=nn.Sequential(*layers[:depth]),
            backbone=nn.Sequential(*layers[depth:]),
            tail=nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1), nn.Linear(_DW[-1][0], num_classes)),
            cut_shape=cut_shape,
        )
