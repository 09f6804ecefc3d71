"""HAR-MLP: the UCI HAR activity-recognition MLP with a single d = 256 cut.

The paper: "The client head is a two-layer MLP (561→256→256, batch norm and ReLU), the server
backbone maps 256→128, and the client tail closes the U shape."

* Head: Linear(561→256) → BN → ReLU → Linear(256→256) → BN → ReLU, cut ``d256``: (256,).
* Backbone: Linear(256→128) → BN → ReLU.
* Tail: Linear(128→classes) (6 activities).

Choices the paper leaves unstated:

* The backbone has the same Linear → BN → ReLU form as the head layers, and the tail is a single
  Linear.
* Linear layers followed by BatchNorm have no bias (BatchNorm has its own shift); the tail keeps
  its bias. PyTorch's default initialisation throughout.
* Any ``(F,)`` input is accepted; UCI HAR's 561 features are the default. On HAPT's raw windows
  (``hapt``: 6 channels × 128 samples, flattened to 768) the same network is
  Linear(768→256) → BN → ReLU → Linear(256→256) → BN → ReLU | Linear(256→128) → BN → ReLU |
  Linear(128→6): the paper's HAR MLP with a wider first layer, cut at d = 256.
* BatchNorm1d in training mode needs more than one sample per batch.

Paper: LightSplit (arXiv:2605.13265), App. B-B4 (Tabular data, UCI HAR).
"""
from __future__ import annotations

from collections import OrderedDict

from torch import nn

from victims.base import VICTIMS, SplitParts, Victim

_HEAD_WIDTH = 256
_BACKBONE_WIDTH = 128


def _dense(index: int, in_features: int, out_features: int) -> list[tuple[str, nn.Module]]:
    return [
        (f"fc{index}", nn.Linear(in_features, out_features, bias=False)),
        (f"bn{index}", nn.BatchNorm1d(out_features)),
        (f"relu{index}", nn.ReLU()),
    ]


@VICTIMS.register("har-mlp")
class HarMLP(Victim):
    """A 561→256→256 | 256→128 | 128→classes MLP with BatchNorm, cut at the 256-wide layer."""

    cuts = {"d256": (_HEAD_WIDTH,)}
    default_cut = "d256"
    input_shape = (561,)
    datasets = ("har", "hapt")

    def build(self, *, cut: str, num_classes: int, input_shape: tuple[int, ...]) -> SplitParts:
        """Build freshly initialised parts split at ``cut``.

        Args:
            cut: ``"d256"``.
            num_classes: width of the tail Linear (6 for UCI HAR).
            input_shape: ``(F,)``, the number of features per sample.

        Raises:
            ValueError: for an unknown cut or an input shape that is not ``(F,)`` with F ≥ 1.
        """
        self.check_cut(cut)
        if len(input_shape) != 1 or input_shape[0] < 1:
            raise ValueError(f"har-mlp needs a (features,) input shape, got {input_shape}")
        head = _dense(1, input_shape[0], _HEAD_WIDTH) + _dense(2, _HEAD_WIDTH, _HEAD_WIDTH)
        return SplitParts(
            head=nn.Sequential(OrderedDict(head)),
            backbone=nn.Sequential(OrderedDict(_dense(3, _HEAD_WIDTH, _BACKBONE_WIDTH))),
            tail=nn.Sequential(OrderedDict([("fc4", nn.Linear(_BACKBONE_WIDTH, num_classes))])),
            cut_shape=(_HEAD_WIDTH,),
        )
