"""The Gaussian-channel bound on what a clipped, Gaussian-noised payload carries about its input."""
from __future__ import annotations

import math

import torch
from torch import Tensor


def gaussian_channel_bits(payloads: Tensor, noise_std: float) -> float:
    """``½ log2 det(I + Σ_p / s²)``: an upper bound, in bits, on the mutual information ``I(x; p + n)``
    between an input and one release of its payload ``p`` with noise ``n ~ N(0, s² I)`` added.

    Assumptions: ``x → p → p + n`` is a Markov chain (the noise is drawn independently of the input
    and added to every coordinate the server receives), so ``I(x; p + n) ≤ I(p; p + n)``; among
    payloads of covariance ``Σ_p`` a Gaussian one maximises that (it maximises the output's differential
    entropy at that covariance), which gives the bound. ``Σ_p`` is the unbiased sample covariance of the rows of ``payloads``, so the
    bound is an estimate (a log-determinant of a sample covariance underestimates the population's
    a little where the sample is small against the payload's dimension).

    Paper: Cover and Thomas, "Elements of Information Theory", 2nd ed., Ch. 8 (the Gaussian maximises
    differential entropy at a given covariance) and Ch. 9 (the Gaussian channel).

    Args:
        payloads: ``(n, m)`` noise-free (clipped) payloads, ``n ≥ 2``.
        noise_std: the noise's standard deviation ``s > 0`` per coordinate (DP: ``σ · clip``).
    """
    if noise_std <= 0:
        raise ValueError(f"gaussian channel: the noise std must be positive, got {noise_std:g}")
    centred = payloads.flatten(1).double()
    centred = centred - centred.mean(0, keepdim=True)
    return _half_log2_det(centred, len(centred) - 1, noise_std)


def gaussian_channel_class_bits(payloads: Tensor, labels: Tensor, noise_std: float) -> float:
    """The class-conditional form: :func:`gaussian_channel_bits` on the pooled within-class covariance
    ``Σ_W = Σ_c Σ_{i∈c} (p_i − μ_c)(p_i − μ_c)ᵀ / (n − K)`` (``K`` classes present).

    It bounds ``I(x; p + n | y)``, what the payload says about the input beyond its label: for each
    class ``c``, ``I(x; p + n | y = c) ≤ ½ log2 det(I + Σ_c / s²)``, and by the concavity of log det
    their class-weighted mean is at most the bound on ``Σ_W``. ``tr Σ_W`` is the within-class scatter
    that WCC shrinks (:func:`defenses.wcc.within_class_scatter`, which takes batch class means).

    Args:
        payloads: ``(n, m)`` noise-free (clipped) payloads.
        labels: ``(n,)`` integer labels; ``n`` must exceed the number of classes present.
        noise_std: as :func:`gaussian_channel_bits`.
    """
    if noise_std <= 0:
        raise ValueError(f"gaussian channel: the noise std must be positive, got {noise_std:g}")
    flat = payloads.flatten(1).double()
    classes, inverse = torch.unique(labels, return_inverse=True)
    if len(flat) <= len(classes):
        raise ValueError(f"gaussian channel: {len(flat)} payloads cannot estimate {len(classes)} classes' covariance")
    sums = flat.new_zeros(len(classes), flat.shape[1]).index_add(0, inverse, flat)
    counts = torch.bincount(inverse, minlength=len(classes)).to(flat.dtype)
    centred = flat - (sums / counts[:, None])[inverse]
    return _half_log2_det(centred, len(flat) - len(classes), noise_std)


def _half_log2_det(centred: Tensor, dof: int, noise_std: float) -> float:
    """``½ log2 det(I + CᵀC / (dof · s²))`` through the smaller Gram matrix of ``C`` (Sylvester's
    determinant identity) and its Cholesky factor (the matrix is the identity plus a PSD one)."""
    gram = centred @ centred.T if len(centred) < centred.shape[1] else centred.T @ centred
    factor = torch.linalg.cholesky(torch.eye(len(gram), dtype=gram.dtype, device=gram.device) + gram / (dof * noise_std**2))
    return float(factor.diagonal().log().sum()) / math.log(2)
