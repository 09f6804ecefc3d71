"""dFIL against the closed form of a linear Gaussian mechanism, an input-dependent noise scale, and
an exact Jacobian of a small network."""
import math

import pytest
import torch

from bench.leakage.fisher import dfil, gaussian_fisher_trace, heteroscedastic_fisher_trace, weighted_jacobian_norms


def seeded():
    return torch.Generator().manual_seed(0)


def many_draws(estimate, x, repeats=1000, probes=20):
    """``estimate(rows, probes)`` on ``repeats`` copies of each row of ``x``, averaged per row: 20,000
    draws per sample in a few pull-backs (samples are measured apart)."""
    return estimate(x.repeat_interleave(repeats, 0), probes).view(len(x), repeats).mean(1)


def test_a_linear_gaussian_mechanism_meets_the_closed_form():
    """x → Ax + N(0, σ²I): dFIL = tr(AᵀA) / (σ² d) at every x. The Rademacher estimate of one
    sample's trace has variance 2(‖AAᵀ‖_F² − Σ_i (AAᵀ)_ii²) / σ⁴ a draw; the mean over 64 samples and
    16 draws each stays within 4 of its standard deviations."""
    torch.manual_seed(0)
    d, m, sigma, batch = 30, 20, 0.5, 64
    a = torch.randn(m, d, dtype=torch.float64)
    traces = gaussian_fisher_trace(lambda x: x @ a.T, torch.randn(batch, d, dtype=torch.float64), sigma,
                                   generator=seeded())
    exact = float((a**2).sum()) / sigma**2
    gram = a @ a.T
    std = math.sqrt(2 * float((gram**2).sum() - (gram.diagonal() ** 2).sum()) / (16 * batch)) / sigma**2
    assert abs(float(traces.mean()) - exact) < 4 * std
    assert dfil(traces, d) == pytest.approx(exact / d, abs=4 * std / d)
    many = many_draws(lambda rows, probes: gaussian_fisher_trace(lambda x: x @ a.T, rows, sigma, probes=probes,
                                                                 generator=seeded()), torch.randn(2, d, dtype=torch.float64))
    assert many.tolist() == pytest.approx([exact, exact], rel=0.02)


def test_orthogonal_rows_make_the_estimate_exact():
    """With AAᵀ = c·I every Rademacher draw gives the trace itself: no estimation error to hide behind."""
    q, _ = torch.linalg.qr(torch.randn(12, 12, dtype=torch.float64))
    a = 3.0 * q[:5]
    traces = gaussian_fisher_trace(lambda x: x @ a.T, torch.randn(4, 12, dtype=torch.float64), 0.1, generator=seeded())
    assert traces.tolist() == pytest.approx([9.0 * 5 / 0.01] * 4, rel=1e-9)


def test_an_input_dependent_noise_scale_adds_twice_its_log_gradient():
    """y ~ N(a·x, e^{2bx}) in one dimension: I(x) = a² e^{−2bx} + 2b²."""
    a, b = 1.7, 0.3
    x = torch.linspace(-1, 1, 5, dtype=torch.float64).view(5, 1)
    traces = many_draws(lambda rows, probes: heteroscedastic_fisher_trace(
        lambda v: (a * v, torch.exp(b * v)), rows, probes=probes, generator=seeded()), x)
    exact = a**2 * torch.exp(-2 * b * x.view(-1)) + 2 * b**2
    assert traces.tolist() == pytest.approx(exact.tolist(), rel=0.03)


def test_samples_of_a_batch_are_measured_apart():
    """Each sample's estimate converges to the Frobenius norm of its own Jacobian (an exact one per
    sample from torch.autograd), not to anything mixed across the batch."""
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 5)).double().eval()
    x = torch.randn(3, 6, dtype=torch.float64)
    exact = [float(torch.autograd.functional.jacobian(net, row).pow(2).sum()) for row in x]
    estimate = many_draws(lambda rows, probes: weighted_jacobian_norms(
        net, rows, torch.ones(len(rows), 5, dtype=torch.float64), probes=probes, generator=seeded()), x)
    assert estimate.tolist() == pytest.approx(exact, rel=0.03)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="positive"):
        gaussian_fisher_trace(lambda x: x, torch.randn(2, 3), 0.0, generator=seeded())
    with pytest.raises(ValueError, match="differ"):
        weighted_jacobian_norms(lambda x: x, torch.randn(2, 3), torch.ones(2, 4), generator=seeded())
