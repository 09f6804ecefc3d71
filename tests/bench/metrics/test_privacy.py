import math

import pytest

from bench.metrics.privacy import dp_metrics, gaussian_release_epsilon


def closed_form_epsilon(noise_multiplier, releases, delta):
    """Gaussian RDP ε(α) = T·α/(2m²), converted with Opacus's conversion on a fine grid of orders."""
    orders = [1 + x / 100 for x in range(1, 10000)]
    best = math.inf
    for a in orders:
        rdp = releases * a / (2 * noise_multiplier**2)
        eps = rdp + math.log1p(-1 / a) - (math.log(delta) + math.log(a)) / (a - 1)
        best = min(best, eps)
    return best


@pytest.mark.parametrize("sigma,releases", [(2.0, 1), (4.0, 11), (10.0, 3)])
def test_matches_the_closed_form_rdp_of_the_gaussian_mechanism(sigma, releases):
    ours = gaussian_release_epsilon(sigma=sigma, releases=releases, delta=1e-5)
    oracle = closed_form_epsilon(sigma / 2, releases, 1e-5)
    assert ours == pytest.approx(oracle, rel=0.05)
    assert ours >= oracle * 0.999  # a coarser grid of orders can only be looser


def test_more_noise_less_epsilon_more_releases_more_epsilon():
    assert gaussian_release_epsilon(sigma=1, releases=1) > gaussian_release_epsilon(sigma=2, releases=1)
    assert gaussian_release_epsilon(sigma=1, releases=10) > gaussian_release_epsilon(sigma=1, releases=1)
    assert gaussian_release_epsilon(sigma=0, releases=1) == math.inf


def test_dp_metrics_count_training_epochs_and_the_evaluation_release():
    m = dp_metrics(sigma=3.0, epochs=4)
    assert m["dp_epsilon_total"] == gaussian_release_epsilon(sigma=3.0, releases=5)
    assert m["dp_epsilon_per_release"] < m["dp_epsilon_total"]
