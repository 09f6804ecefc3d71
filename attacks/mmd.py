"""Multiple-kernel maximum mean discrepancy (MK-MMD) between two equal-size batches of features.

The estimator FORA trains its substitute with (Xu et al., CVPR 2024; the released code adapts the
MK-MMD of Long et al., "Learning Transferable Features with Deep Adaptation Networks", ICML 2015):

* the kernel is a sum of Gaussian kernels ``k_m(a, b) = exp(-‖a − b‖² / (2 σ_m²))``;
* each bandwidth is a multiple of the mean squared distance over the concatenated batch,
  ``σ_m² = α_m · mean_{i,j} ‖f_i − f_j‖²`` over all ``(2B)²`` ordered pairs of ``f = [x; y]``
  (zero diagonal included), recomputed on every call and treated as a constant (no gradient);
  ``α_m ∈ {2⁻³, 2⁻², 2⁻¹, 2⁰, 2¹}``;
* the quadratic estimator weighs within-batch pairs ``i ≠ j`` by ``1 / (B(B − 1))`` and all
  cross pairs by ``−1 / B²`` (twice: ``(x, y)`` and ``(y, x)``)::

      MMD² = Σ_{i≠j} [K(x_i, x_j) + K(y_i, y_j)] / (B(B−1)) − 2 Σ_{i,j} K(x_i, y_j) / B²

  Its expectation is zero when both batches are independent draws from one distribution.

Differences from the released code (``FORA/utils.py``, ``MultipleKernelMaximumMeanDiscrepancy``):

* The released loss adds the constant ``2 / (B − 1)``; it changes no gradient and is left out here,
  so values here are ``2 / (B − 1)`` lower and an equal-distribution estimate centres on 0.
* Squared distances come from the Gram matrix of the centred rows (``‖a‖² + ‖b‖² − 2 a·b``, clamped
  at 0), not from a ``(2B, 2B, d)`` difference tensor: same values up to rounding, far less memory.
  The centring keeps it so when the rows share an offset far above their spread.
* If every feature is identical (mean squared distance 0) the released bandwidth is 0 and the loss
  NaN; here the bandwidth is floored at the dtype's smallest normal number and the MMD is 0.
"""
from __future__ import annotations

import torch
from torch import Tensor

BANDWIDTH_MULTIPLIERS: tuple[float, ...] = tuple(2.0**k for k in range(-3, 2))


def squared_distances(features: Tensor) -> Tensor:
    """Pairwise squared Euclidean distances of the rows of ``features`` ``(n, d)``, shape ``(n, n)``.

    The rows are centred first: the distances are the same, but the Gram expansion no longer cancels
    a common offset much larger than the rows' spread (in float32 that cancellation made the
    distances noise and the MMD estimate wrong, even below its bound ``−2M / (B − 1)``)."""
    features = features - features.mean(0, keepdim=True)
    norms = features.pow(2).sum(1)
    gram = features @ features.T
    return (norms[:, None] + norms[None, :] - 2.0 * gram).clamp_min(0.0)


def multi_gaussian_kernel(features: Tensor, multipliers: tuple[float, ...] = BANDWIDTH_MULTIPLIERS) -> Tensor:
    """Sum over ``multipliers`` of Gaussian kernel matrices with bandwidths ``α · mean squared distance``."""
    d2 = squared_distances(features)
    base = d2.detach().mean().clamp_min(torch.finfo(d2.dtype).tiny)
    return sum(torch.exp(-d2 / (2.0 * alpha * base)) for alpha in multipliers)


def mk_mmd(x: Tensor, y: Tensor, *, multipliers: tuple[float, ...] = BANDWIDTH_MULTIPLIERS) -> Tensor:
    """The MK-MMD estimate between ``x`` and ``y`` (symmetric in its arguments).

    Args:
        x: ``(B, ...)`` features of one domain (flattened per sample).
        y: ``(B, ...)`` features of the other domain; the same ``B`` and the same per-sample size.
        multipliers: bandwidth multipliers ``α_m`` (one Gaussian kernel each).

    Returns:
        A scalar tensor that carries gradients to ``x`` and ``y`` (not through the bandwidth).

    Raises:
        ValueError: for unequal batch sizes or feature sizes, fewer than two samples, or no kernel.
    """
    x, y = x.flatten(1), y.flatten(1)
    if x.shape != y.shape:
        raise ValueError(f"mk_mmd needs batches of equal size and width, got {tuple(x.shape)} and {tuple(y.shape)}")
    b = x.shape[0]
    if b < 2:
        raise ValueError(f"mk_mmd needs at least 2 samples per batch, got {b}")
    if not multipliers:
        raise ValueError("mk_mmd needs at least one kernel")
    kernel = multi_gaussian_kernel(torch.cat([x, y]), multipliers)
    k_xx, k_yy, k_xy = kernel[:b, :b], kernel[b:, b:], kernel[:b, b:]
    off_diagonal = 1.0 - torch.eye(b, dtype=kernel.dtype, device=kernel.device)
    within = ((k_xx + k_yy) * off_diagonal).sum() / (b * (b - 1))
    return within - 2.0 * k_xy.sum() / (b * b)
