"""NoPeek: its distance correlation against a slow reference and analytic limits, its loss, and its
effect on a small digits run (dCor between inputs and payloads falls as α grows)."""
import math

import numpy as np
import pytest
import torch

from bench.data import digits
from bench.data.splits import carve
from bench.profiles import Profile
from bench.run.cell import Cell
from bench.run.training import train_victim
from defenses import build_defense
from defenses.learned_1x1 import Learned1x1
from defenses.nopeek import distance_correlation

CUT = (8, 12, 12)


def slow_distance_correlation(x, y):
    """Distance correlation on squared Euclidean distances, from the definitions, with loops."""
    n = len(x)

    def double_centred(rows):
        dist = [[sum((rows[i][k] - rows[j][k]) ** 2 for k in range(len(rows[i]))) for j in range(n)] for i in range(n)]
        row_mean = [sum(dist[i]) / n for i in range(n)]
        col_mean = [sum(dist[i][j] for i in range(n)) / n for j in range(n)]
        grand = sum(row_mean) / n
        return [[dist[i][j] - row_mean[i] - col_mean[j] + grand for j in range(n)] for i in range(n)]

    a, b = double_centred(x.tolist()), double_centred(y.tolist())
    v2 = lambda p, q: sum(p[i][j] * q[i][j] for i in range(n) for j in range(n)) / n**2
    return math.sqrt(v2(a, b)) / math.sqrt(math.sqrt(v2(a, a)) * math.sqrt(v2(b, b)))


def test_dcor_matches_a_slow_reference():
    torch.manual_seed(0)
    x = torch.randn(9, 5, dtype=torch.float64)
    for y in (torch.randn(9, 3, dtype=torch.float64), x[:, :3] ** 2 + 0.3 * torch.randn(9, 3, dtype=torch.float64)):
        assert distance_correlation(x, y).item() == pytest.approx(slow_distance_correlation(x, y), rel=1e-9)


def test_dcor_on_squared_distances_is_the_root_of_the_rv_coefficient():
    """On squared distances the double-centred matrices are −2 × the centred Gram matrices."""
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(20, 6)), rng.normal(size=(20, 4))
    y[:, 0] += x[:, 0]
    gx, gy = [(m - m.mean(0)) @ (m - m.mean(0)).T for m in (x, y)]
    rv = np.trace(gx @ gy) / np.sqrt(np.trace(gx @ gx) * np.trace(gy @ gy))
    assert distance_correlation(torch.tensor(x), torch.tensor(y)).item() == pytest.approx(math.sqrt(rv), rel=1e-9)


def test_dcor_is_near_zero_for_independent_rows_and_one_for_a_linear_map():
    torch.manual_seed(2)
    x = torch.randn(1000, 2, dtype=torch.float64)
    assert distance_correlation(x, torch.randn(1000, 2, dtype=torch.float64)).item() < 0.1
    small = torch.randn(50, 7, dtype=torch.float64)
    rotation, _ = torch.linalg.qr(torch.randn(7, 7, dtype=torch.float64))
    assert distance_correlation(small, -2.5 * small @ rotation + 4.0).item() == pytest.approx(1.0, abs=1e-9)


def slow_plain_distance_correlation(x, y):
    """Székely's distance correlation (plain Euclidean distances), from the definitions, with loops."""
    n = len(x)

    def double_centred(rows):
        dist = [[math.dist(rows[i], rows[j]) for j in range(n)] for i in range(n)]
        row_mean = [sum(dist[i]) / n for i in range(n)]
        grand = sum(row_mean) / n
        return [[dist[i][j] - row_mean[i] - row_mean[j] + grand for j in range(n)] for i in range(n)]

    a, b = double_centred(x.tolist()), double_centred(y.tolist())
    v2 = lambda p, q: sum(p[i][j] * q[i][j] for i in range(n) for j in range(n)) / n**2
    return math.sqrt(v2(a, b)) / math.sqrt(math.sqrt(v2(a, a)) * math.sqrt(v2(b, b)))


def test_plain_distance_dcor_matches_a_slow_reference_and_its_limits():
    torch.manual_seed(3)
    x = torch.randn(9, 5, dtype=torch.float64)
    for y in (torch.randn(9, 3, dtype=torch.float64), x[:, :3] ** 2 + 0.3 * torch.randn(9, 3, dtype=torch.float64)):
        assert distance_correlation(x, y, exponent=1.0).item() == pytest.approx(slow_plain_distance_correlation(x, y),
                                                                                rel=1e-9)
    small = torch.randn(50, 7, dtype=torch.float64)
    rotation, _ = torch.linalg.qr(torch.randn(7, 7, dtype=torch.float64))
    assert distance_correlation(small, -2.5 * small @ rotation + 4.0, exponent=1.0).item() == pytest.approx(1.0, abs=1e-6)
    # independent rows: the sample dCor (a V-statistic) is biased up by order n^-1/2, 0.07-0.09 at n = 1,000
    for seed in range(3):
        torch.manual_seed(seed)
        big = torch.randn(1000, 2, dtype=torch.float64)
        assert distance_correlation(big, torch.randn(1000, 2, dtype=torch.float64), exponent=1.0).item() < 0.15


def test_plain_distances_see_the_nonlinear_dependence_that_squared_ones_miss():
    """y = x² for symmetric x: uncorrelated, so the RV form (exponent 2) is near 0, yet dependent."""
    x = torch.linspace(-1, 1, 401, dtype=torch.float64).view(-1, 1)
    assert distance_correlation(x, x**2).item() < 0.05
    assert distance_correlation(x, x**2, exponent=1.0).item() > 0.4
    with pytest.raises(ValueError, match="exponent"):
        distance_correlation(x, x, exponent=2.5)


def test_dcor_gradient_stays_finite_for_a_constant_payload():
    x = torch.randn(16, 10)
    y = torch.ones(16, 4, requires_grad=True)
    distance_correlation(x, y).backward()
    assert torch.isfinite(y.grad).all()


def test_client_loss_is_alpha_times_dcor_of_inputs_and_payload():
    inputs = torch.randn(6, 1, 28, 28)
    z = torch.randn(6, *CUT)
    for alpha in (0.0, 0.1, 9.0):
        defense = build_defense("nopeek", cut_shape=CUT, seed=0, cr=8, nopeek_alpha=alpha)
        payload = defense.encode(z)
        loss = defense.client_loss(payload, torch.zeros(6, dtype=torch.long), inputs=inputs)
        expected = alpha * distance_correlation(inputs.flatten(1), payload.flatten(1))
        assert loss.item() == pytest.approx(expected.item(), abs=1e-7)


@pytest.mark.parametrize("name", ["nopeek", "shredder"])
def test_cr_one_sends_the_raw_cut_and_above_one_acts_on_learned_1x1_code(name):
    torch.manual_seed(3)
    z = torch.randn(3, *CUT)
    raw = build_defense(name, cut_shape=CUT, seed=0, cr=1).train()
    assert raw.bottleneck is None and raw.server_parameters() == []
    assert torch.equal(raw.decode(raw.encode(z)), raw.encode(z))  # nothing between the payload and the backbone
    coded = build_defense(name, cut_shape=CUT, seed=0, cr=4).train()
    reference = Learned1x1(cut_shape=CUT, cr=4)
    reference.load_state_dict(coded.bottleneck.state_dict())
    payload = coded.encode(z)
    offset = coded.client_side.noise if name == "shredder" else 0.0
    assert torch.allclose(payload, reference.encode(z) + offset)
    assert torch.allclose(coded.decode(payload), reference.decode(payload))
    assert set(map(id, reference.parameters())).isdisjoint(map(id, coded.parameters()))
    bottleneck = {id(p) for p in coded.bottleneck.parameters()}
    assert bottleneck <= {id(p) for p in coded.client_parameters() + coded.server_parameters()}
    for cr in (8, 16, 32):
        learned = build_defense("learned-1x1", cut_shape=CUT, seed=0, cr=cr).describe()
        assert build_defense(name, cut_shape=CUT, seed=0, cr=cr).describe() == learned


@pytest.fixture(scope="module")
def small_digits():
    profile = Profile(name="smoke", members=500, nonmembers=64, test=256, epochs=4, batch_size=32)
    return profile, carve(digits.load(), profile)


def test_dcor_of_inputs_and_payloads_falls_as_alpha_grows(small_digits):
    """Raw cut (CR 1), 4 epochs of 500 digits: measured dCor 0.989, 0.955, 0.819 at α = 0, 1, 9."""
    profile, data = small_digits
    measured, accuracy = [], {}
    for alpha in (0.0, 1.0, 9.0):
        cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="nopeek", profile="smoke", seed=0,
                    defense_knobs={"cr": 1.0, "nopeek_alpha": alpha})
        victim = train_victim(cell, data=data, profile=profile)
        model = victim.model.eval()
        with torch.no_grad():
            payload = model.defense.encode(model.heads[0](data.test.x))
        measured.append(distance_correlation(data.test.x.flatten(1), payload.flatten(1)).item())
        accuracy[alpha] = victim.metrics["accuracy"]
    assert measured[0] - measured[1] > 0.01 and measured[1] - measured[2] > 0.05, measured
    assert accuracy[0.0] > 0.5 and accuracy[9.0] > 0.3, accuracy


def test_dcor_is_unchanged_and_its_gradient_finite_for_a_payload_shrunk_towards_a_constant():
    torch.manual_seed(0)
    x, y = torch.randn(32, 10), torch.randn(32, 4)
    y = y + 0.5 * x[:, :4]
    reference = distance_correlation(x, y)
    for scale in (1e-4, 1e-8, 1e-12):
        tiny = (scale * y).requires_grad_(True)  # float32 squares of these distances underflow unscaled
        value = distance_correlation(x, tiny)
        assert value.item() == pytest.approx(reference.item(), rel=1e-3), scale
        value.backward()
        assert torch.isfinite(tiny.grad).all(), scale
