"""Fisher-information leakage (dFIL) of a noisy encoder, from vector-Jacobian products.

For a release ``y ~ N(μ(x), diag σ(x)²)`` of an input ``x`` with ``d`` values, the Fisher information
about ``x`` is ``I(x) = J_μᵀ diag(σ⁻²) J_μ + 2 J_σᵀ diag(σ⁻²) J_σ`` (the second term vanishes where the
noise does not depend on ``x``). Maeng et al. call ``dFIL(x) = tr I(x) / d`` the diagonal Fisher
information leakage: by the Cramér-Rao bound any unbiased estimate ``x̂`` of ``x`` from ``y`` has
``E‖x̂ − x‖² / d ≥ 1 / dFIL(x)`` (through ``tr(I⁻¹) ≥ d² / tr I``). Averaged over inputs, Jensen's
inequality turns the mean of ``dFIL(x)`` into a bound too: mean MSE ``≥ 1 / mean dFIL``. Biased
attackers (priors, decoders trained on auxiliary data) are not bounded by it.

The trace is estimated, not computed exactly: ``tr(Jᵀ W J) = E_v ‖Jᵀ (√w ⊙ v)‖²`` for Rademacher
``v`` (Hutchinson), each draw one vector-Jacobian product of the whole batch. The exact trace needs
one product per output coordinate (144 at MNIST's CR 8, 1,152 raw): on one busy CPU core a conv
head's backward over 144 × 64 samples took 1.2-2 s, against ``PROBES`` × 64 here.

Paper: Maeng, Guo, Kumar, Chaudhuri, Suh, "Bounding the Invertibility of Privacy-preserving Instance
Encoding using Fisher Information", NeurIPS 2023; Hutchinson, "A stochastic estimator of the trace
of the influence matrix for Laplacian smoothing splines", 1990.
"""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

# Rademacher draws per sample: the estimate of one sample's trace has a relative standard deviation
# of at most sqrt(2 / PROBES) (a rank-one Jacobian; less the more spread its spectrum), that of a
# mean over B samples sqrt(B) times less.
PROBES = 16


def weighted_jacobian_norms(fn: Callable[[Tensor], Tensor], x: Tensor, weights: Tensor, *, probes: int = PROBES,
                            generator: torch.Generator) -> Tensor:
    """Per sample ``b``, an unbiased estimate of ``Σ_i w_{b,i} ‖∂fn(x)_{b,i} / ∂x_b‖²``, shape ``(B,)``.

    ``fn`` maps a batch ``(B, ...)`` to ``(B, m)`` and must treat samples independently (a module in
    evaluation mode does), so one pull-back of a batch of cotangents gives each sample's own
    ``J_bᵀ v_b`` in its own input slot.

    Args:
        fn: the map whose Jacobian is measured.
        x: ``(B, ...)`` inputs.
        weights: ``(B, m)`` non-negative weights ``w``.
        probes: Rademacher draws per sample.
        generator: the source of the draws (on ``x``'s device).
    """
    out, pullback = torch.func.vjp(fn, x)
    if out.shape != weights.shape:
        raise ValueError(f"weighted_jacobian_norms: outputs {tuple(out.shape)} and weights {tuple(weights.shape)} differ")
    scale = weights.to(out.dtype).sqrt()
    total = out.new_zeros(len(out))
    for _ in range(probes):
        signs = torch.randint(0, 2, out.shape, generator=generator, device=out.device).to(out.dtype) * 2 - 1
        (pulled,) = pullback(signs * scale)
        total += pulled.detach().flatten(1).pow(2).sum(1)
    return total / probes


def gaussian_fisher_trace(mean: Callable[[Tensor], Tensor], x: Tensor, noise_std: float, *, probes: int = PROBES,
                          generator: torch.Generator) -> Tensor:
    """``tr I(x)`` per sample for ``y = mean(x) + N(0, s² I)``: ``‖J_mean(x)‖_F² / s²``, shape ``(B,)``.

    Args:
        mean: the deterministic encoder, ``(B, ...) → (B, m)``, samples independent.
        x: ``(B, ...)`` inputs.
        noise_std: ``s > 0``, the same for every coordinate and input.
        probes, generator: as :func:`weighted_jacobian_norms`.
    """
    if noise_std <= 0:
        raise ValueError(f"fisher trace: the noise std must be positive, got {noise_std:g}")
    with torch.no_grad():
        shape = mean(x).shape
    weights = torch.full(shape, noise_std**-2, dtype=x.dtype, device=x.device)
    return weighted_jacobian_norms(mean, x, weights, probes=probes, generator=generator)


def heteroscedastic_fisher_trace(mean_and_std: Callable[[Tensor], tuple[Tensor, Tensor]], x: Tensor, *,
                                 probes: int = PROBES, generator: torch.Generator) -> Tensor:
    """``tr I(x)`` per sample for ``y ~ N(μ(x), diag σ(x)²)``: ``Σ_i (‖∇μ_i‖² + 2‖∇σ_i‖²) / σ_i²``, ``(B,)``.

    Args:
        mean_and_std: ``(B, ...) → ((B, ...), (B, ...))``, the mean and the (positive) standard deviation.
        x: ``(B, ...)`` inputs.
        probes, generator: as :func:`weighted_jacobian_norms`.
    """
    def stacked(inputs: Tensor) -> Tensor:
        mu, std = mean_and_std(inputs)
        return torch.cat([mu.flatten(1), std.flatten(1)], dim=1)

    with torch.no_grad():
        variance = mean_and_std(x)[1].flatten(1).pow(2)
    weights = torch.cat([1 / variance, 2 / variance], dim=1)
    return weighted_jacobian_norms(stacked, x, weights, probes=probes, generator=generator)


def dfil(traces: Tensor, input_values: int) -> float:
    """Mean over samples of ``dFIL(x) = tr I(x) / d``, ``d = input_values``."""
    return float(traces.mean()) / input_values
