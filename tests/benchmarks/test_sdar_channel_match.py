"""benchmarks/sdar_channel_match.py: the channel diagnostics recover a known remap exactly."""
from __future__ import annotations

import pytest
import torch

from tests.benchmarks.scripts import load_benchmark_script


@pytest.fixture(scope="module")
def channel_match():
    return load_benchmark_script("sdar_channel_match")


def _maps(seed: int = 0) -> torch.Tensor:
    return torch.randn(40, 6, 4, 4, generator=torch.Generator().manual_seed(seed))


def test_correlation_finds_a_permutation_of_channels(channel_match):
    client = _maps()
    order = torch.tensor([3, 0, 5, 1, 4, 2])
    simulator = 2.0 * client[:, order] + 1.0  # simulator channel k carries client channel order[k]
    corr = channel_match.channel_correlation(client, simulator)
    assert torch.equal(corr.argmax(1), torch.argsort(order))
    assert torch.allclose(corr.max(1).values, torch.ones(6), atol=1e-5)
    assert float((corr.argmax(1) == torch.arange(6)).float().mean()) == pytest.approx(1 / 6)  # only channel 4 stays


def test_least_squares_remap_recovers_a_mixing_and_bias(channel_match):
    client = _maps()
    mixing, bias = torch.randn(6, 6, generator=torch.Generator().manual_seed(1)), torch.arange(6.0)
    simulator = torch.einsum("nchw,cd->ndhw", client, mixing) + bias[None, :, None, None]
    weights = channel_match.least_squares_remap(client[:20], simulator[:20])
    assert torch.allclose(channel_match.apply_remap(weights, client[20:]), simulator[20:], atol=1e-4)


def test_remap_of_unrelated_maps_explains_nothing_held_out(channel_match):
    client, simulator = _maps(0), _maps(1)
    weights = channel_match.least_squares_remap(client[:20], simulator[:20])
    residual = channel_match.apply_remap(weights, client[20:]) - simulator[20:]
    assert residual.pow(2).mean() > 0.8 * simulator[20:].var()
