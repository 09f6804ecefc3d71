"""Fixed orthogonal random projections: global (d×k) and block-local (b×b tiles sharing one R_b)."""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from bench.run.device import current_device
from defenses.base import DefenseConfigError


def orthonormal_columns(rows: int, cols: int, seed: int) -> Tensor:
    """A ``rows × cols`` matrix with orthonormal columns: Q of the thin QR of a seeded Gaussian."""
    if cols > rows:
        raise DefenseConfigError(f"cannot draw {cols} orthonormal columns in dimension {rows}")
    # Drawn and factorised on the CPU, then moved: the same R on every device.
    gaussian = torch.randn(rows, cols, generator=torch.Generator().manual_seed(seed), dtype=torch.float64, device="cpu")
    q, r = torch.linalg.qr(gaussian)
    # Fix QR's sign ambiguity so the same seed gives the same R on every LAPACK.
    q = q * torch.sign(torch.diagonal(r)).unsqueeze(0)
    return q.to(torch.float32).contiguous().to(current_device())


class OrthogonalProjection(nn.Module):
    """Global projection ``z̃ = Rᵀz`` with ``R ∈ R^{d×k}``, ``RᵀR = I``; fixed, no parameters.

    Args:
        cut_shape: per-sample shape of ``z``.
        k: payload size.
        seed: seed of the Gaussian matrix.
    """

    def __init__(self, *, cut_shape: tuple[int, ...], k: int, seed: int) -> None:
        super().__init__()
        self.cut_shape = tuple(cut_shape)
        self.k = k
        self.register_buffer("R", orthonormal_columns(math.prod(cut_shape), k, seed))

    def project(self, z: Tensor) -> Tensor:
        return z.flatten(1) @ self.R

    def lift(self, payload: Tensor) -> Tensor:
        """``R z̃``: the point of range(R) the payload describes, in the cut shape."""
        return (payload @ self.R.T).view(payload.shape[0], *self.cut_shape)


class BlockLocalProjection(nn.Module):
    """Per-tile projection: ``b×b`` tiles of a ``C×H×W`` map, each projected by one shared ``R_b``.

    The ``k`` payload scalars are split across the ``T`` tiles in raster order: every tile gets
    ``k // T`` and the first ``k % T`` tiles one more; tile ``t`` uses the first ``k_t`` columns of
    ``R_b ∈ R^{b²C × ⌈k/T⌉}``. With ``b`` equal to the map size this is the global projection.

    Paper: LightSplit, Sect. IV-B and App. B-B3.
    """

    def __init__(self, *, cut_shape: tuple[int, ...], k: int, tile: int, seed: int) -> None:
        super().__init__()
        if len(cut_shape) != 3:
            raise DefenseConfigError(f"block-local needs a C×H×W cut, got shape {cut_shape}")
        c, h, w = cut_shape
        if tile < 1 or h % tile or w % tile:
            raise DefenseConfigError(f"block-local: tile {tile} does not divide the {h}×{w} cut map")
        self.cut_shape = tuple(cut_shape)
        self.tile = tile
        self.k = k
        self.tiles = (h // tile) * (w // tile)
        per_tile = -(-k // self.tiles)
        tile_dim = c * tile * tile
        if per_tile > tile_dim:
            raise DefenseConfigError(
                f"block-local: {per_tile} scalars per {tile}×{tile} tile exceed its {tile_dim} values"
            )
        budgets = torch.full((self.tiles,), k // self.tiles, dtype=torch.long)
        budgets[: k % self.tiles] += 1
        # mask[t, j] marks the columns of R_b that tile t uses; the payload is their concatenation.
        mask = torch.arange(per_tile).unsqueeze(0) < budgets.unsqueeze(1)
        self.register_buffer("R", orthonormal_columns(tile_dim, per_tile, seed))
        self.register_buffer("mask", mask)
        # The same selection as flat indices: indexing with a boolean mask has a data-dependent
        # shape, which torch.vmap refuses (UnSplit's batched clones run this encoder under vmap).
        self.register_buffer("kept", mask.flatten().nonzero().squeeze(1), persistent=False)

    def _tiles(self, z: Tensor) -> Tensor:
        return F.unfold(z, kernel_size=self.tile, stride=self.tile).transpose(1, 2)  # (B, T, b²C)

    def project(self, z: Tensor) -> Tensor:
        full = self._tiles(z) @ self.R  # (B, T, per_tile)
        return full.flatten(1)[:, self.kept]

    def lift(self, payload: Tensor) -> Tensor:
        full = payload.new_zeros(payload.shape[0], self.mask.numel())
        full[:, self.kept] = payload
        tiles = (full.view(-1, *self.mask.shape) @ self.R.T).transpose(1, 2)
        return F.fold(tiles, output_size=self.cut_shape[1:], kernel_size=self.tile, stride=self.tile)
