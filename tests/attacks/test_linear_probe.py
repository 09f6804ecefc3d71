"""The linear probe: exact recovery through an invertible linear payload, better than the mean image
on a trained raw victim, and a closed form that no budget moves."""
import pytest
import torch

from attacks import ATTACKS, AttackerView, Capability, Observation
from attacks.linear_probe import RIDGE_ALPHAS
from bench.metrics import mse, ssim
from bench.profiles import get_profile
from bench.run.attacker_views import build_view
from bench.run.cell import Cell
from bench.run.training import train_victim
from defenses import build_defense

SHAPE = (1, 16, 16)


def linear_view(n_aux=600, n_targets=32, seed=0):
    """Smooth random images whose payload is an invertible linear map of them (condition number 4)."""
    generator = torch.Generator().manual_seed(seed)
    coarse = torch.rand(n_aux + n_targets, 1, 4, 4, generator=generator)
    images = torch.nn.functional.interpolate(coarse, size=SHAPE[1:], mode="bilinear", align_corners=False)
    images = (images + 0.05 * torch.rand(images.shape, generator=generator)).clamp(0, 1)
    d = images[0].numel()
    rotation, _ = torch.linalg.qr(torch.randn(d, d, generator=generator, dtype=torch.float64))
    mixing = (rotation * torch.linspace(0.5, 2.0, d, dtype=torch.float64)).float()
    payloads = images.flatten(1) @ mixing.T
    view = AttackerView(
        granted=frozenset({Capability.AUX_QUERIES}), kind="image", input_shape=SHAPE, num_classes=10, cut_shape=(d,),
        defense_name="raw", targets=Observation(payloads=payloads[:n_targets]), backbone=torch.nn.Identity(),
        server_defense=build_defense("raw", cut_shape=(d,), seed=0),
        aux=Observation(payloads=payloads[n_targets:], inputs=images[n_targets:]),
    )
    return view, images[:n_targets]


def test_an_invertible_linear_payload_is_recovered_exactly():
    view, truth = linear_view()
    out = ATTACKS.get("linear-probe")(view=view, profile="smoke", seed=0).run()
    assert out.reconstructions.shape == truth.shape
    assert ssim(out.reconstructions, truth).min() > 0.99
    assert mse(out.reconstructions, truth).max() < 1e-4
    assert out.scores["linear_probe_alpha"] == min(RIDGE_ALPHAS)  # noiseless: the least penalty wins


def test_the_budget_changes_nothing_in_a_closed_form():
    view, _ = linear_view(n_aux=300, n_targets=8)
    probe = ATTACKS.get("linear-probe")
    once = probe(view=view, profile="cpu", seed=0).run().reconstructions
    assert torch.equal(probe(view=view, profile="cpu", seed=3, budget=4.0).run().reconstructions, once)
    assert probe.configs == {}


@pytest.fixture(scope="module")
def raw_view(digits):
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=0)
    victim = train_victim(cell, data=digits, profile=get_profile("smoke"))
    return build_view(cell=cell, model=victim.model, data=digits, client_indices=victim.client_indices,
                      granted=frozenset({Capability.AUX_QUERIES}), n_targets=64)


def test_on_a_raw_victim_it_beats_the_mean_image(raw_view):
    view, truth = raw_view
    out = ATTACKS.get("linear-probe")(view=view, profile="smoke", seed=0).run()
    assert out.reconstructions.min() >= 0 and out.reconstructions.max() <= 1
    floor = mse(view.aux.inputs.mean(0, keepdim=True).expand_as(truth.x), truth.x).mean()
    assert mse(out.reconstructions, truth.x).mean() < 0.5 * floor
