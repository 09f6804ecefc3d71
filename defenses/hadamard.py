"""A structured orthogonal projection: a subsampled randomized Hadamard transform."""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from bench.run.device import current_device
from defenses.base import DefenseConfigError
from defenses.projection import orthonormal_columns

MAX_FACTOR_LOG2 = 5  # Hadamard factors of at most 32×32: few BLAS calls, O(log d) work per value


def hadamard(n: int) -> Tensor:
    """The orthonormal ``n × n`` Hadamard matrix in Sylvester order (``n`` a power of two)."""
    if n < 1 or n & (n - 1):
        raise ValueError(f"a Hadamard matrix needs a power-of-two size, got {n}")
    h = torch.ones(1, 1)
    while h.shape[0] < n:
        h = torch.cat((torch.cat((h, h), 1), torch.cat((h, -h), 1)), 0)
    return h / math.sqrt(n)


def factor_sizes(d: int) -> list[int]:
    """``[m, 2^a1, 2^a2, …]`` with product ``d``: the odd part ``m`` of ``d``, then its power-of-two
    part split into near-equal factors of at most ``2^MAX_FACTOR_LOG2``."""
    pow2 = d & -d
    a = pow2.bit_length() - 1
    parts = -(-a // MAX_FACTOR_LOG2) if a else 0
    logs = [a // parts + (i < a % parts) for i in range(parts)] if parts else []
    return [d // pow2] + [2**e for e in logs]


def kronecker_apply(x: Tensor, factors: list[Tensor]) -> Tensor:
    """``x (B, d) ↦ x (F_0 ⊗ F_1 ⊗ …)ᵀ`` without forming the Kronecker product: one mode product per
    factor on the ``(B, f_0, f_1, …)`` view, each a (batched) matmul with a contiguous result."""
    batch, sizes = x.shape[0], [f.shape[0] for f in factors]
    for i, mat in enumerate(factors):
        outer, inner = batch * math.prod(sizes[:i]), math.prod(sizes[i + 1 :])
        if inner == 1:
            x = x.reshape(outer, sizes[i]) @ mat.T
        else:
            x = torch.matmul(mat, x.reshape(outer, sizes[i], inner))
    return x.reshape(batch, -1)


class SubsampledHadamardProjection(nn.Module):
    """``z̃ = Rᵀz = S (O_m ⊗ H) D z``: random signs, an orthogonal mix, ``k`` kept rows.

    ``D`` holds seeded random signs, ``H`` is the orthonormal Hadamard matrix of the largest power of
    two ``2^a`` dividing ``d`` (applied as Kronecker factors of at most 32×32), and ``O_m`` a seeded
    dense orthogonal matrix on the odd factor ``m = d / 2^a`` (``m = 1`` when ``d`` is a power of
    two: the classic SRHT). ``S`` keeps ``k`` seeded rows. The mix is orthogonal, so any ``k`` of its
    rows are orthonormal: ``RᵀR = I``, and every payload value mixes every coordinate of ``z``.
    Work per sample is ``d·(m + Σ factors)`` (``1152·33`` on MnistNet's split-2, ``4096·48`` on
    ResNet-18's l2h) instead of the dense ``d·k``; a ``d`` with a large odd factor gains nothing.

    Args:
        cut_shape: per-sample shape of ``z``.
        k: payload size, ``1 ≤ k ≤ d``.
        seed: seed of ``D``, ``O_m`` and ``S``.
    """

    def __init__(self, *, cut_shape: tuple[int, ...], k: int, seed: int) -> None:
        super().__init__()
        d = math.prod(cut_shape)
        if not 1 <= k <= d:
            raise DefenseConfigError(f"cannot keep {k} rows of a {d}-dimensional transform")
        self.cut_shape = tuple(cut_shape)
        self.k = k
        gen = torch.Generator().manual_seed(seed)  # drawn on the CPU: the same transform on every device
        device = current_device()
        self.register_buffer("signs", (torch.randint(0, 2, (d,), generator=gen, device="cpu").float() * 2 - 1).to(device))
        self.register_buffer("rows", torch.randperm(d, generator=gen, device="cpu")[:k].sort().values.to(device))
        odd, *pow2 = factor_sizes(d)
        self.register_buffer("odd_mix", orthonormal_columns(odd, odd, seed + 1))
        self.register_buffer("hadamards", torch.cat([hadamard(n).flatten() for n in pow2]) if pow2 else torch.empty(0))
        self.pow2_sizes = pow2

    def factors(self) -> list[Tensor]:
        """``[O_m, H_{f1}, H_{f2}, …]``: the mix is their Kronecker product."""
        out, start = [self.odd_mix], 0
        for n in self.pow2_sizes:
            out.append(self.hadamards[start : start + n * n].view(n, n))
            start += n * n
        return out

    def project(self, z: Tensor) -> Tensor:
        return kronecker_apply(z.flatten(1) * self.signs, self.factors()).index_select(1, self.rows)

    def lift(self, payload: Tensor) -> Tensor:
        """``R z̃`` in the cut shape: scatter the kept rows, apply the transposed mix, then the signs."""
        full = payload.new_zeros(payload.shape[0], self.signs.numel()).index_copy(1, self.rows, payload)
        z = kronecker_apply(full, [f.T for f in self.factors()]) * self.signs
        return z.view(payload.shape[0], *self.cut_shape)

    @property
    def R(self) -> Tensor:
        """The dense ``d × k`` matrix (public state for attackers and tests), built column by column."""
        eye = torch.eye(self.k, dtype=self.signs.dtype, device=self.signs.device)
        return self.lift(eye).flatten(1).T.contiguous()
