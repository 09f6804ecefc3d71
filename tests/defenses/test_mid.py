"""MID: the KL term against its closed form and torch's, the client's loss on the posterior it sent
a sample of, the channel-wise shapes and bytes, and who holds what."""
import copy
import math

import pytest
import torch
from torch import nn
from torch.distributions import Normal, kl_divergence

from defenses import build_defense
from defenses.mid import STD_SHIFT, kl_to_standard_normal

CUT = (8, 12, 12)
LABELS = torch.zeros(4, dtype=torch.long)
INPUTS = torch.zeros(4, 1, 28, 28)


def test_kl_is_exactly_zero_at_the_prior():
    assert torch.equal(kl_to_standard_normal(torch.zeros(3, 2, 5, 5), torch.ones(3, 2, 5, 5)), torch.zeros(3))


def test_kl_is_positive_off_the_prior_and_matches_the_closed_form():
    torch.manual_seed(0)
    mu, std = torch.randn(6, 2, 4, 4, dtype=torch.float64), torch.rand(6, 2, 4, 4, dtype=torch.float64) + 0.1
    kl = kl_to_standard_normal(mu, std)
    closed = [0.5 * sum(m * m + s * s - 1 - 2 * math.log(s) for m, s in zip(mu[i].flatten().tolist(), std[i].flatten().tolist()))
              for i in range(6)]
    assert kl.tolist() == pytest.approx(closed, rel=1e-12)
    torch_kl = kl_divergence(Normal(mu, std), Normal(torch.zeros_like(mu), torch.ones_like(std))).flatten(1).sum(1)
    assert torch.allclose(kl, torch_kl)
    assert (kl > 0).all()
    assert (kl_to_standard_normal(torch.zeros(1, 1), torch.full((1, 1), 1.5)) > 0).all()  # σ alone off the prior
    assert (kl_to_standard_normal(torch.full((1, 1), 0.2), torch.ones(1, 1)) > 0).all()  # μ alone off the prior


def _set_prior_posterior(defense):
    """Encoder weights that give μ = 0 and σ = softplus(s − 0.5) = 1 whatever the input."""
    conv = defense.client_side.encoder[0]
    nn.init.zeros_(conv.weight)
    with torch.no_grad():
        conv.bias.zero_()
        conv.bias[defense.latent :] = STD_SHIFT + math.log(math.e - 1)


def test_client_loss_is_zero_when_the_posterior_is_the_prior():
    defense = build_defense("mid", cut_shape=CUT, seed=0, cr=4, mid_lambda=0.5).train()
    _set_prior_posterior(defense)
    payload = defense.encode(torch.rand(4, *CUT))
    assert defense.client_loss(payload, LABELS, inputs=INPUTS).item() == pytest.approx(0.0, abs=1e-5)


def test_client_loss_is_lambda_times_the_batch_mean_kl_of_the_posterior_sampled():
    torch.manual_seed(1)
    z = torch.rand(4, *CUT)
    for lam in (0.01, 0.5):
        defense = build_defense("mid", cut_shape=CUT, seed=0, cr=4, mid_lambda=lam).train()
        mu, std = defense.posterior(z)
        loss = defense.client_loss(defense.encode(z), LABELS, inputs=INPUTS)
        assert loss.item() == pytest.approx(lam * kl_to_standard_normal(mu, std).mean().item(), rel=1e-6)
        assert loss.item() > 0
        loss.backward()
        assert all(p.grad is not None for p in defense.client_side.encoder.parameters())


def test_the_payload_is_one_sample_of_the_posterior_in_training_and_evaluation():
    torch.manual_seed(2)
    defense = build_defense("mid", cut_shape=CUT, seed=0, cr=4)
    z = torch.rand(1, *CUT).expand(10000, *CUT)
    mu, std = (t[0] for t in defense.posterior(z[:1]))
    for mode in (defense.train, defense.eval):
        mode()
        with torch.no_grad():
            payload = defense.encode(z)
        assert payload.shape == (10000, 2, 12, 12)
        assert torch.allclose(payload.mean(0), mu, atol=0.06)
        assert torch.allclose(payload.std(0), std, rtol=0.05)
    assert std.min() >= torch.nn.functional.softplus(torch.tensor(-STD_SHIFT))  # released ReLU + shift: σ ≥ 0.474


def test_client_loss_needs_this_batch_encoded_in_training():
    defense = build_defense("mid", cut_shape=CUT, seed=0, cr=8).train()
    payload = defense.encode(torch.rand(4, *CUT))
    copied = copy.deepcopy(defense)  # a copy (an attacker's, the server's) carries no posterior
    defense.client_loss(payload, LABELS, inputs=INPUTS)
    for stale in (defense, copied):
        with pytest.raises(RuntimeError, match="posterior"):
            stale.client_loss(payload, LABELS, inputs=INPUTS)
    defense.eval().encode(torch.rand(4, *CUT))
    with pytest.raises(RuntimeError, match="posterior"):
        defense.client_loss(payload, LABELS, inputs=INPUTS)


@pytest.mark.parametrize("cr,latent", [(8, 1), (4, 2), (2, 4), (16, 1)])
def test_channel_wise_layers_realise_the_cr_along_channels(cr, latent):
    defense = build_defense("mid", cut_shape=CUT, seed=0, cr=cr)
    encoder, decoder = defense.client_side.encoder, defense.server_side.decoder
    assert [type(m) for m in encoder] == [nn.Conv2d, nn.ReLU]
    assert encoder[0].kernel_size == (1, 1) and (encoder[0].in_channels, encoder[0].out_channels) == (8, 2 * latent)
    convs = [m for m in decoder if isinstance(m, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size) for c in convs] == [(latent, 40, (1, 1)), (40, 8, (1, 1))]
    assert isinstance(decoder[-1], nn.ReLU)
    payload = defense.encode(torch.rand(3, *CUT))
    assert payload.shape == (3, latent, 12, 12) and defense.decode(payload).shape == (3, *CUT)
    assert defense.describe()["realized_cr"] == pytest.approx(8 / latent)
    assert {id(p) for p in defense.client_parameters()} == {id(p) for p in encoder.parameters()}
    assert {id(p) for p in defense.server_parameters()} == {id(p) for p in decoder.parameters()}


def test_vector_cut_uses_the_released_linear_layers():
    defense = build_defense("mid", cut_shape=(256,), seed=0, cr=16)
    linear = [m for m in [*defense.client_side.encoder, *defense.server_side.decoder] if isinstance(m, nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linear] == [(256, 32), (16, 1280), (1280, 256)]
    assert defense.encode(torch.rand(3, 256)).shape == (3, 16)
    assert defense.describe()["realized_cr"] == pytest.approx(16.0)


def test_server_half_holds_the_decoder_and_nothing_of_the_encoder():
    defense = build_defense("mid", cut_shape=CUT, seed=0, cr=8)
    half = defense.server_half()
    assert list(half.client_side.parameters()) == [] and not hasattr(half.client_side, "posterior")
    assert half.server_side.decoder is defense.server_side.decoder
