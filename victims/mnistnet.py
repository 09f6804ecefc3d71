"""MnistNet: UnSplit's MNIST / Fashion-MNIST victim, split at UnSplit's layer indices.

Layers, in UnSplit's order and with its index in brackets (``ege-erdogan/unsplit``,
``unsplit/models.py``, class ``MnistNet``)::

    conv1(C→8, k5) [0], ReLU [1], MaxPool2 [2], conv2(8→16, k5) [3], ReLU [4], MaxPool2 [5],
    flatten, fc1(256→120) [6], ReLU [7], fc2(120→84) [8], ReLU [9], fc3(84→classes) [10]

UnSplit's ``split_depth = ℓ`` runs the client up to and including layer ``ℓ``, so the cuts are

* ``split-2``: after pool1, ``(8, 12, 12)``, d = 1152 (the default, UnSplit's leakiest cut);
* ``split-4``: after the second ReLU, before pool2, ``(16, 8, 8)``, d = 1024.

Choices the sources leave unstated:

* Tail = fc3 alone (the classifier end of the U shape); the backbone is everything between the
  cut and fc3, so it ends in ``fc2 → ReLU``.
* Every layer keeps PyTorch's default initialisation and its bias, as in UnSplit.
* Inputs other than ``(1, 28, 28)`` are accepted: the number of channels sets conv1's input and
  fc1's input width is the flattened pool2 output for that input size (256 at 28×28).
* The layers are created in model order whatever the cut, so one seed gives the same weights at
  both cuts.

Paper: LightSplit (arXiv:2605.13265), App. B-C (UnSplit: ℓ = 2 post-pool1 d = 1152, ℓ = 4
post-ReLU2 d = 1024); Erdoğan et al., "UnSplit" (arXiv:2108.09033).
"""
from __future__ import annotations

import math
from collections import OrderedDict

import torch
from torch import nn

from victims.base import VICTIMS, SplitParts, Victim

# Number of conv-stage layers (UnSplit indices 0..5) the client head holds at each cut.
_HEAD_DEPTH = {"split-2": 3, "split-4": 5}
_STAGE_DEPTH = 6
_DEFAULT_INPUT = (1, 28, 28)


def _conv_stage(in_channels: int) -> list[tuple[str, nn.Module]]:
    return [
        ("conv1", nn.Conv2d(in_channels, 8, kernel_size=5)),
        ("relu1", nn.ReLU()),
        ("pool1", nn.MaxPool2d(2, 2)),
        ("conv2", nn.Conv2d(8, 16, kernel_size=5)),
        ("relu2", nn.ReLU()),
        ("pool2", nn.MaxPool2d(2, 2)),
    ]


def _stage_shape(depth: int, input_shape: tuple[int, ...]) -> tuple[int, ...]:
    """Per-sample shape after the first ``depth`` conv-stage layers, for one input of ``input_shape``.

    Raises:
        ValueError: for an input that is not ``(C, H, W)`` or too small for the conv/pool stages.
    """
    if len(input_shape) != 3:
        raise ValueError(f"mnistnet needs a (C, H, W) input shape, got {input_shape}")
    # Meta tensors carry shapes only: no memory, no compute, no draw from the global RNG.
    with torch.device("meta"):
        layers = nn.Sequential(OrderedDict(_conv_stage(input_shape[0])[:depth]))
        try:
            return tuple(layers(torch.empty(1, *input_shape)).shape[1:])
        except RuntimeError as err:
            raise ValueError(f"mnistnet cannot take input shape {input_shape}: {err}") from None


@VICTIMS.register("mnistnet")
class MnistNet(Victim):
    """UnSplit's MnistNet, a LeNet-5-like CNN, split after pool1 or after the second ReLU."""

    cuts = {"split-2": (8, 12, 12), "split-4": (16, 8, 8)}  # a dry run checks them in the tests
    default_cut = "split-2"
    input_shape = _DEFAULT_INPUT
    datasets = ("mnist", "digits")

    def build(self, *, cut: str, num_classes: int, input_shape: tuple[int, ...]) -> SplitParts:
        """Build freshly initialised parts split at ``cut``.

        Args:
            cut: ``"split-2"`` or ``"split-4"``.
            num_classes: width of fc3.
            input_shape: ``(C, H, W)`` of one input; 28×28 gives fc1 its 256 inputs.

        Raises:
            ValueError: for an unknown cut or an input too small for the two conv/pool stages.
        """
        self.check_cut(cut)
        cut_shape = _stage_shape(_HEAD_DEPTH[cut], input_shape)
        flat_dim = math.prod(_stage_shape(_STAGE_DEPTH, input_shape))
        layers = _conv_stage(input_shape[0]) + [
            ("flatten", nn.Flatten(1)),
            ("fc1", nn.Linear(flat_dim, 120)),
            ("relu3", nn.ReLU()),
            ("fc2", nn.Linear(120, 84)),
            ("relu4", nn.ReLU()),
        ]
        depth = _HEAD_DEPTH[cut]
        return SplitParts(
            head=nn.Sequential(OrderedDict(layers[:depth])),
            backbone=nn.Sequential(OrderedDict(layers[depth:])),
            tail=nn.Sequential(OrderedDict([("fc3", nn.Linear(84, num_classes))])),
            cut_shape=cut_shape,
        )
