"""The substitute-transfer R² the bench records for an attack that names its substitute network."""
from __future__ import annotations

import pytest
import torch
from sklearn.linear_model import Ridge
from torch import nn

from attacks import ATTACKS
from bench.run.transfer import _scale, ridge_r2, substitute_transfer


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _head(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Conv2d(8, 8, 3, padding=1), nn.ReLU()).eval()


def _images(n: int = 600) -> torch.Tensor:  # halves of 300 > the maps' 128 values: a linear map can be exact
    return torch.rand(n, 3, 8, 8, generator=torch.Generator().manual_seed(1))


def test_kernel_form_predicts_as_scikit_learn_ridge():
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(60, 30, generator=g, dtype=torch.float64), torch.randn(30, 5, generator=g, dtype=torch.float64)
    y = x @ w + 0.5 * torch.randn(60, 5, generator=g, dtype=torch.float64)
    fit, score = _scale(x[:40], x[40:])
    sk = Ridge(alpha=0.3).fit(fit.numpy(), y[:40].numpy()).predict(score.numpy())
    total = ((y[40:] - y[40:].mean(0)) ** 2).sum()
    expected = float(1 - ((y[40:] - torch.from_numpy(sk)) ** 2).sum() / total)
    assert ridge_r2(x[:40], y[:40], x[40:], y[40:], alphas=(0.3,)) == pytest.approx(expected, abs=1e-9)


def test_the_alpha_is_chosen_by_leave_one_out_error():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(50, 200, generator=g, dtype=torch.float64)
    y = x[:, :3] + 2.0 * torch.randn(50, 3, generator=g, dtype=torch.float64)  # noisy: a tiny alpha overfits
    tiny = ridge_r2(x[:25], y[:25], x[25:], y[25:], alphas=(1e-6,))
    assert ridge_r2(x[:25], y[:25], x[25:], y[25:], alphas=(1e-6, 1.0, 100.0)) >= tiny


def test_an_oracle_substitute_transfers_fully_a_random_one_no_better_than_pixels():
    victim, aux = _head(0), _images()
    oracle, notes = substitute_transfer(_head(0), victim, aux)
    assert oracle["transfer_r2"] == pytest.approx(1.0, abs=0.02) and oracle["substitute_transferred"] == 1.0
    assert oracle["transfer_r2_pixels"] < 0.95
    assert "did not transfer" not in notes["substitute_transferred"]
    random, _ = substitute_transfer(_head(7), victim, aux)
    assert random["transfer_r2_pixels"] == oracle["transfer_r2_pixels"]  # same halves, same baseline
    # an untrained substitute of another seed: its random features explain less than the pixels do
    assert random["transfer_r2"] <= random["transfer_r2_pixels"] and random["substitute_transferred"] == 0.0


def test_a_substitute_no_better_than_pixels_is_flagged():
    constant = nn.Sequential(nn.Conv2d(3, 8, 1), nn.ReLU())
    nn.init.zeros_(constant[0].weight)
    values, notes = substitute_transfer(constant, _head(0), _images())
    assert values["transfer_r2"] <= values["transfer_r2_pixels"]
    assert values["substitute_transferred"] == 0.0
    assert notes["substitute_transferred"].startswith("substitute did not transfer")


def test_too_few_aux_images_record_nothing_and_say_why():
    values, notes = substitute_transfer(_head(0), _head(0), _images(3))
    assert set(values.values()) == {None} and "too few aux images" in notes["transfer_r2"]


def test_modules_keep_their_mode():
    substitute, victim = _head(0).train(), _head(1).eval()
    substitute_transfer(substitute, victim, _images(20))
    assert substitute.training and not victim.training


def test_only_fora_names_a_substitute_network():
    named = {name: ATTACKS.get(name).substitute_network for name in ATTACKS.names() if ATTACKS.get(name).substitute_network}
    assert named == {"fora": "substitute_head"}


def test_a_column_nearly_dead_on_the_fit_half_does_not_blow_up_the_score_half():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 20, generator=g, dtype=torch.float64)
    y = x[:, :2].clone()
    x[:100, 5] = 1e-9 * torch.randn(100, generator=g, dtype=torch.float64)  # dead where fit, alive where scored
    assert ridge_r2(x[:100], y[:100], x[100:], y[100:]) > 0.9
