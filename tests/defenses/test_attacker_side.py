"""What attackers compute from a defense: public cut maps and straight-through simulated encoders."""
import pytest
import torch

from defenses import build_defense
from defenses.payload import as_vector

CUT = (8, 12, 12)


@pytest.mark.parametrize("name", ["lightsplit-f", "lightsplit-l", "lightsplit-f+dp", "lightsplit-l+dp"])
def test_projection_cut_map_is_r_z_tilde_whatever_the_lift_back(name):
    defense = build_defense(name, cut_shape=CUT, seed=0, cr=8, sigma=0.0).eval()
    payload = torch.randn(5, 144)
    R = defense.public_state()["R"]
    assert torch.allclose(defense.cut_map(payload).flatten(1), payload @ R.T, atol=1e-6)
    if name.startswith("lightsplit-l"):
        assert not torch.allclose(defense.decode(payload), defense.cut_map(payload))  # φ is not R z̃


@pytest.mark.parametrize("name", ["raw", "topk", "learned-1x1"])
def test_other_cut_maps_are_what_the_backbone_receives(name):
    defense = build_defense(name, cut_shape=CUT, seed=0, cr=8).eval()
    payload = defense.encode(torch.randn(3, *CUT))
    assert torch.equal(defense.cut_map(payload), defense.decode(payload))


@pytest.mark.parametrize("name", ["topk", "topk+dp"])
def test_attackers_simulate_top_k_straight_through(name):
    defense = build_defense(name, cut_shape=CUT, seed=0, cr=8, sigma=0.0)
    z = torch.randn(4, *CUT)
    defense.calibrate(z * 100)  # a clip far above every norm: σ = 0 and no clipping
    z.requires_grad_(True)
    simulated = defense.attacker_encode(z)
    with torch.no_grad():
        real = as_vector(defense.encode(z))
    assert torch.allclose(as_vector(simulated), real)  # the same forward
    upstream = torch.randn_like(real)
    (as_vector(simulated) * upstream).sum().backward()
    assert torch.allclose(z.grad.flatten(1), upstream)  # identity gradient, dropped coordinates included
    z2 = z.detach().clone().requires_grad_(True)
    (as_vector(defense.encode(z2)) * upstream).sum().backward()
    assert (z2.grad.flatten(1) == 0).sum() > 0  # the real encoder blocks the dropped coordinates


def test_attacker_encode_is_encode_for_differentiable_defenses():
    defense = build_defense("lightsplit-f", cut_shape=CUT, seed=0, cr=8)
    z = torch.randn(2, *CUT)
    assert torch.equal(defense.attacker_encode(z), defense.encode(z))


def test_an_attackers_disco_copy_trains_its_own_pruner():
    """An attacker's simulated DISCO runs its differentiable forward, so a loss on the simulated payload
    reaches the copy's pruner through the gates (straight-through detached them: a simulator's pruner
    stayed at its random start and SDAR collapsed, results/README.md)."""
    defense = build_defense("disco", cut_shape=CUT, seed=0, cr=8, input_shape=(1, 28, 28), proxy_width=4, proxy_blocks=0)
    z = torch.randn(6, *CUT, requires_grad=True)
    simulated = defense.attacker_encode(z)
    assert torch.equal(as_vector(simulated), as_vector(defense.encode(z)))
    (defense.cut_map(simulated) * torch.randn(6, *CUT)).sum().backward()
    pruner_grads = [p.grad for p in defense.client_side.pruner.parameters()]
    assert all(g is not None for g in pruner_grads) and sum(g.abs().sum() for g in pruner_grads) > 0
    assert z.grad.abs().sum() > 0
