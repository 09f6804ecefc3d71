"""The Gaussian-channel bound against its closed form on isotropic Gaussian payloads, a direct
log-determinant, and its class-conditional form."""
import math

import numpy as np
import pytest
import torch

from bench.leakage.channel import gaussian_channel_bits, gaussian_channel_class_bits


def reference_bits(payloads: np.ndarray, noise_std: float) -> float:
    cov = np.atleast_2d(np.cov(payloads, rowvar=False))
    sign, logdet = np.linalg.slogdet(np.eye(len(cov)) + cov / noise_std**2)
    assert sign > 0
    return 0.5 * logdet / math.log(2)


def test_isotropic_gaussian_payloads_meet_the_closed_form():
    """``d/2 · log2(1 + s²/t²)``; the sample covariance of n = 20,000 rows in d = 6 moves it by well
    under 1% (its eigenvalues spread by about sqrt(d/n) = 1.7% of s² around s²)."""
    rng = np.random.default_rng(0)
    d, s, t = 6, 0.7, 0.2
    payloads = torch.tensor(rng.normal(scale=s, size=(20_000, d)))
    exact = d / 2 * math.log2(1 + s**2 / t**2)
    assert gaussian_channel_bits(payloads, t) == pytest.approx(exact, rel=0.01)


@pytest.mark.parametrize("n,d", [(50, 8), (30, 80)])
def test_both_gram_paths_equal_a_direct_log_determinant(n, d):
    rng = np.random.default_rng(1)
    payloads = rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    assert gaussian_channel_bits(torch.tensor(payloads), 0.3) == pytest.approx(reference_bits(payloads, 0.3), rel=1e-9)


def test_the_class_form_reads_the_within_class_spread_only():
    """Ten classes with far-apart means and isotropic spread s inside each: the class form is the
    closed form at s, the plain bound far above it."""
    rng = np.random.default_rng(2)
    d, s, t, per_class = 4, 0.5, 0.25, 3000
    means = rng.normal(scale=20.0, size=(10, d))
    labels = np.repeat(np.arange(10), per_class)
    payloads = torch.tensor(means[labels] + rng.normal(scale=s, size=(len(labels), d)))
    exact = d / 2 * math.log2(1 + s**2 / t**2)
    within = gaussian_channel_class_bits(payloads, torch.tensor(labels), t)
    assert within == pytest.approx(exact, rel=0.01)
    assert gaussian_channel_bits(payloads, t) > within + 10


def test_one_class_reduces_the_class_form_to_the_plain_bound():
    payloads = torch.randn(40, 5, dtype=torch.float64)
    assert gaussian_channel_class_bits(payloads, torch.zeros(40, dtype=torch.long), 0.4) == pytest.approx(
        gaussian_channel_bits(payloads, 0.4), rel=1e-12)


def test_no_noise_or_too_few_rows_is_refused():
    with pytest.raises(ValueError, match="positive"):
        gaussian_channel_bits(torch.randn(10, 3), 0.0)
    with pytest.raises(ValueError, match="cannot estimate"):
        gaussian_channel_class_bits(torch.randn(3, 2), torch.arange(3), 1.0)
