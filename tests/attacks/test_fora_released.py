"""FORA's networks at the paper profile are the release's (X1aoyangXu/FORA, ``FORA/model.py``), built on
meta tensors (shapes only, nothing trained), at the release's cut and at SimpleCNN's L2H."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from attacks.decoder_nets import ConvImageDecoder
from attacks.fora_config import CONFIGS, FORAConfig
from attacks.fora_nets import ConvCritic, SubstituteHead, VGGSubstituteHead, substitute_head
from bench.attack_knobs import SUBSTITUTE

CIFAR = (3, 32, 32)
PAPER = CONFIGS["paper"]


def _layers(module: nn.Module, kinds=(nn.Conv2d, nn.BatchNorm2d, nn.ReLU, nn.MaxPool2d)) -> list[str]:
    out = []
    for m in module.modules():
        if isinstance(m, nn.Conv2d):
            out.append(f"conv{m.kernel_size[0]}:{m.in_channels}>{m.out_channels}/s{m.stride[0]}")
        elif isinstance(m, kinds) and not isinstance(m, nn.Conv2d):
            out.append(type(m).__name__)
    return out


def _paper_networks(cut):
    with torch.device("meta"):
        return (substitute_head(PAPER.substitute, CIFAR, cut, PAPER.substitute_width),
                ConvCritic(cut, PAPER.critic_width, PAPER.critic_blocks),
                ConvImageDecoder(cut, CIFAR, PAPER.decoder.width))


def test_paper_profile_is_the_released_budget_and_sizes() -> None:
    assert (PAPER.iterations, PAPER.batch_size, PAPER.substitute, PAPER.critic_width, PAPER.critic_blocks) == (
        40_000, 64, "vgg", 128, 6)
    assert (PAPER.decoder.width, PAPER.decoder.lr, PAPER.decoder.epochs * 5000 // 64) == (256, 1e-4, 40_000)
    assert CONFIGS["cpu"].substitute == CONFIGS["smoke"].substitute == "conv"  # stored cpu cells unchanged


def test_released_cut_substitute_is_the_vgg16_bn_level_2_client() -> None:
    substitute, critic, decoder = _paper_networks((64, 16, 16))
    assert isinstance(substitute, VGGSubstituteHead)
    assert _layers(substitute) == ["conv3:3>64/s1", "BatchNorm2d", "ReLU", "conv3:64>64/s1", "BatchNorm2d", "ReLU",
                                   "MaxPool2d"]
    assert substitute(torch.empty(2, *CIFAR, device="meta")).shape == (2, 64, 16, 16)
    # Conv(C→128, s2) → ReLU → Conv(128→256, s2) → 6 pre-activation blocks → Conv(256→256, s2) → Linear(1024)
    convs = [c for c in _layers(critic) if c.startswith("conv")]
    assert convs[:2] == ["conv3:64>128/s2", "conv3:128>256/s2"] and convs[-1] == "conv3:256>256/s2"
    assert convs[2:-1] == ["conv3:256>256/s1"] * 12
    assert not any(isinstance(m, nn.BatchNorm2d) for m in critic.modules())
    assert critic.score.in_features == 1024  # the release's hard-wired 2×2×256
    assert critic(torch.empty(2, 64, 16, 16, device="meta")).shape == (2,)
    assert decoder(torch.empty(2, 64, 16, 16, device="meta")).shape == (2, *CIFAR)
    assert decoder.low[0].out_channels == 256


def test_l2h_cut_keeps_the_released_sizes_in_the_vgg_form() -> None:
    substitute, critic, decoder = _paper_networks((64, 8, 8))
    assert _layers(substitute) == [
        "conv3:3>32/s1", "BatchNorm2d", "ReLU", "conv3:32>32/s1", "BatchNorm2d", "ReLU", "MaxPool2d",
        "conv3:32>64/s1", "BatchNorm2d", "ReLU", "conv3:64>64/s1", "BatchNorm2d", "ReLU", "MaxPool2d"]
    assert substitute(torch.empty(2, *CIFAR, device="meta")).shape == (2, 64, 8, 8)
    assert sum(isinstance(m, nn.Conv2d) for m in critic.modules()) == 3 + 2 * 6
    assert critic.score.in_features == 256  # 8 → 4 → 2 → 1
    assert decoder(torch.empty(2, 64, 8, 8, device="meta")).shape == (2, *CIFAR)


@pytest.mark.parametrize(("input_shape", "cut"), [((1, 28, 28), (8, 12, 12)), ((1, 28, 28), (16, 8, 8)),
                                                  (CIFAR, (32, 16, 16)), (CIFAR, (128, 8, 8)), ((3, 64, 64), (64, 8, 8))])
def test_vgg_form_lands_on_every_cut(input_shape, cut) -> None:
    with torch.device("meta"):
        head = VGGSubstituteHead(input_shape, cut)
        assert head(torch.empty(2, *input_shape)).shape == (2, *cut)


def test_substitute_form_is_validated_and_picked_by_the_knob() -> None:
    with torch.device("meta"):
        assert isinstance(substitute_head("conv", CIFAR, (64, 8, 8), 16), SubstituteHead)
    with pytest.raises(ValueError, match="form must be one of conv, vgg"):
        substitute_head("resnet", CIFAR, (64, 8, 8), 16)
    with pytest.raises(ValueError, match="substitute must be one of"):
        FORAConfig(iterations=1, decoder=PAPER.decoder, substitute="resnet")
    assert SUBSTITUTE.default == "profile" and set(SUBSTITUTE.choices) == {"profile", "conv", "vgg"}
