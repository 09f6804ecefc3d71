"""attacks/payload_moments.py: the running moments, the standardised gap, and what matching it identifies."""
import pytest
import torch

from attacks.payload_moments import FLOOR, PayloadMomentTie


def _maps(n=256, c=4, h=3, w=3, seed=0, spread_means=True):
    g = torch.Generator().manual_seed(seed)
    means = torch.randn(1, c, h, w, generator=g) * 2 if spread_means else torch.randn(1, c, 1, 1, generator=g).expand(1, c, h, w)
    return means + torch.randn(n, c, h, w, generator=g)


def test_running_moments_follow_the_exponential_average():
    tie = PayloadMomentTie(decay=0.5)
    a, b = torch.full((2, 3), 1.0), torch.full((2, 3), 3.0)
    tie.observe(a)
    tie.observe(b)
    mean, square = tie.moments
    assert torch.allclose(mean, torch.full((3,), 2.0)) and torch.allclose(square, torch.full((3,), 5.0))


def test_gap_is_zero_on_the_tracked_mean_and_counts_in_tracked_stds():
    tie = PayloadMomentTie(decay=0.0)
    maps = _maps()
    tie.observe(maps)
    assert float(tie.gap(maps)) == pytest.approx(0.0, abs=1e-10)
    std = maps.std(0, correction=0)
    assert float(tie.gap(maps + 0.5 * std)) == pytest.approx(0.25, rel=1e-4)
    tie.observe(10 * maps)  # decay 0: the last batch alone; the gap is scale-free
    assert float(tie.gap(10 * maps + 5 * std)) == pytest.approx(0.25, rel=1e-4)


def test_on_a_dense_map_the_floor_never_binds_and_the_gap_is_the_plain_standardised_one():
    tie = PayloadMomentTie(decay=0.0)
    real, fake = _maps(seed=1), _maps(seed=2)
    tie.observe(real)
    mean, std = real.mean(0), real.std(0, correction=0)
    plain = ((fake.mean(0) - mean) / std).pow(2).mean()
    assert float(tie.gap(fake)) == pytest.approx(float(plain), rel=1e-5) and tie.floored == [0.0]


def test_a_never_firing_element_is_standardised_by_the_floor_not_by_zero():
    real = _maps(n=64, c=2, h=2, w=2, seed=3)
    real[:, 0, 0, 0] = 0.0  # this element never fires
    tie = PayloadMomentTie(decay=0.0)
    tie.observe(real)
    fake = real.clone()
    fake[0, 0, 0, 0] = 3.0  # the simulator fires there once in the batch
    rms = float(real.std(0, correction=0).pow(2).mean().sqrt())
    expected = (3.0 / 64 / (FLOOR * rms)) ** 2 / 8  # the one element's z², averaged over the 8 elements
    assert float(tie.gap(fake)) == pytest.approx(expected, rel=1e-4)
    assert tie.floored == [pytest.approx(1 / 8)]


def test_gap_before_any_observation_and_a_bad_decay_fail():
    with pytest.raises(RuntimeError, match="no payload observed"):
        PayloadMomentTie().gap(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="decay must lie in"):
        PayloadMomentTie(decay=1.0)


def _fit_channel_mixing(client, steps=600):
    """Fit a 1×1 mixing of the client's maps, from a random start, to the client's running mean alone."""
    tie = PayloadMomentTie(decay=0.0)
    tie.observe(client)
    c = client.shape[1]
    mixing = (torch.eye(c) + 0.5 * torch.randn(c, c, generator=torch.Generator().manual_seed(3))).requires_grad_()
    opt = torch.optim.Adam([mixing], lr=0.02)
    for _ in range(steps):
        opt.zero_grad()
        tie.gap(torch.einsum("dc,nchw->ndhw", mixing, client)).backward()
        opt.step()
    return mixing.detach(), float(tie.gap(torch.einsum("dc,nchw->ndhw", mixing.detach(), client)))


def test_matching_the_mean_identifies_a_channel_mixing_when_position_means_span_the_channels():
    mixing, gap = _fit_channel_mixing(_maps(spread_means=True))
    assert gap < 1e-6 and torch.allclose(mixing, torch.eye(4), atol=1e-4)


def test_matching_the_mean_does_not_identify_it_when_every_position_has_one_mean():
    mixing, gap = _fit_channel_mixing(_maps(spread_means=False))
    assert gap < 1e-3 and (mixing - torch.eye(4)).abs().max() > 0.1  # matched (from 0.77), yet another code
