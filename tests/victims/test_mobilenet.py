"""FORA's released CIFAR MobileNet: the release's layers at each cut, named by grids only."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from victims import VICTIMS, default_victim


def _parts(cut: str, input_shape=(3, 32, 32)):
    with torch.device("meta"):  # shapes only: no weights drawn, no compute
        return VICTIMS.get("mobilenet")().build(cut=cut, num_classes=10, input_shape=input_shape)


def _convs(module: nn.Module) -> list[tuple[int, int, int, int, int]]:
    return [(m.in_channels, m.out_channels, m.kernel_size[0], m.stride[0], m.groups)
            for m in module.modules() if isinstance(m, nn.Conv2d)]


def test_the_release_level_2_head_is_conv_bn_then_one_depthwise_block() -> None:
    parts = _parts("l2")
    # conv_bn(3→32, s2), then conv_dw(32→64, s1): depthwise 3×3 (groups 32) and pointwise 1×1
    assert _convs(parts.head) == [(3, 32, 3, 2, 1), (32, 32, 3, 1, 32), (32, 64, 1, 1, 1)]
    assert parts.cut_shape == (64, 16, 16)
    assert all(m.bias is None for m in parts.head.modules() if isinstance(m, nn.Conv2d))


@pytest.mark.parametrize(("cut", "shape", "convs"), [("l1", (32, 16, 16), 1), ("l2", (64, 16, 16), 3), ("l3", (128, 8, 8), 7)])
def test_cut_shapes_on_cifar_and_the_whole_model_ends_in_logits(cut, shape, convs) -> None:
    parts = _parts(cut)
    z = parts.head(torch.empty(2, 3, 32, 32, device="meta"))
    assert tuple(z.shape[1:]) == shape == parts.cut_shape
    assert len(_convs(parts.head)) == convs
    assert len(_convs(parts.head)) + len(_convs(parts.backbone)) == 1 + 2 * 13  # conv_bn + 13 conv_dw
    assert parts.tail(parts.backbone(z)).shape == (2, 10)
    assert parts.tail[-1].in_features == 1024


def test_named_only_cifar_keeps_its_default_victims() -> None:
    assert VICTIMS.get("mobilenet").datasets == () and VICTIMS.get("mobilenet").default_cut == "l2"
    assert default_victim("cifar10-jpeg") == "simplecnn" and default_victim("cifar10") == "resnet18"


def test_rejects_inputs_it_cannot_take() -> None:
    with pytest.raises(ValueError, match="mobilenet"):
        _parts("l2", (32, 32))
    with pytest.raises(ValueError, match="no cut 'l4'"):
        _parts("l4")
