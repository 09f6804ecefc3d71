"""C3-SL: a batch's cut activations bound to fixed random keys by circular convolution and summed in groups."""
from __future__ import annotations

import math

import torch
from torch import Tensor

from defenses.base import DEFENSES, Defense, DefenseConfigError
from defenses.knobs import CR
from defenses.payload import GroupedPayload, Payload


def circular_convolution(a: Tensor, b: Tensor) -> Tensor:
    """``(a ⊛ b)[n] = Σ_j a[j] b[(n − j) mod d]`` along the last dimension (broadcast), by FFT."""
    d = a.shape[-1]
    return torch.fft.irfft(torch.fft.rfft(a, n=d) * torch.fft.rfft(b, n=d), n=d)


def circular_correlation(key: Tensor, v: Tensor) -> Tensor:
    """``(key ⋆ v)[n] = Σ_m key[m] v[(n + m) mod d]`` along the last dimension (broadcast), by FFT:
    the approximate inverse of binding with a unit-norm ``key``."""
    d = v.shape[-1]
    return torch.fft.irfft(torch.fft.rfft(key, n=d).conj() * torch.fft.rfft(v, n=d), n=d)


def released_keys(group_size: int, d: int, seed: int) -> Tensor:
    """``group_size`` keys of length ``d``: Gaussian entries of variance ``1/d``, each key then scaled
    to unit L2 norm (the released ``ECC.generate_key``), drawn from a generator seeded by ``seed``."""
    keys = torch.randn(group_size, d, generator=torch.Generator().manual_seed(seed)) / math.sqrt(d)
    return keys / keys.norm(dim=1, keepdim=True)


def normalise_for_binding(flat: Tensor) -> Tensor:
    """Each row to zero mean and spread ``1/√d`` (the released ``normalize_for_circular``, applied at
    its linear cut); a constant row maps to zeros instead of dividing by a zero spread."""
    std, mean = torch.std_mean(flat, dim=1, keepdim=True)
    return (flat - mean) / (math.sqrt(flat.shape[1]) * std.clamp_min(1e-12))


def require_group_size(cr: float | None) -> int:
    """``R = CR``, checked to be an integer ≥ 2."""
    if cr is None:
        raise DefenseConfigError("c3sl needs a compression ratio (--cr), the group size R")
    if cr < 2 or cr != int(cr):
        raise DefenseConfigError(f"c3sl: CR is the group size R and must be an integer >= 2, got {cr:g}")
    return int(cr)


@DEFENSES.register("c3sl")
class C3SL(Defense):
    """Batch-wise compression: each group of ``R`` consecutive samples crosses as one ``d``-vector.

    Sample ``s`` of a group is flattened, bound to the fixed key ``k_s`` by circular convolution and
    the group's ``R`` bound vectors are summed: ``v = Σ_s k_s ⊛ z_s``. The server unbinds each sample
    with its key by circular correlation, ``ẑ_s = k_s ⋆ v``: ``z_s`` plus crosstalk from the group
    (about ``Σ_j ‖z_j‖²`` of squared error with random unit keys at large ``d``), and feeds the ``R``
    maps to its backbone. Gradients take the same operations back. A batch that ``R`` does not divide
    is padded with zero activations, which bind to nothing; ``decode`` returns exactly ``B`` maps.
    The keys are public (the server holds them; :meth:`public_state`) and never trained.

    Bytes: ``⌈B/R⌉`` rows of ``d`` float32 values per batch (and as many gradient rows back), so
    ``4d/R`` bytes per sample at a batch that ``R`` divides: CR = R, exactly, against raw. The division
    is per batch, not per sample: one row carries ``R`` samples.

    Released code (WesleyHsieh0806/C3-SL, ``CIFAR10/C3-SL/model.py`` ``ECC`` and ``utils.py``): keys
    ``N(0, 1/d)`` scaled to unit norm, one per slot, drawn once; convolution and correlation as here
    (computed there by padded ``conv2d``/``conv1d``, here by FFT); each row normalised to zero mean and
    spread ``1/√d`` before binding only at the ``linear`` split, so here only at a vector cut.
    ``compress_ratio`` defaults to 64 in ``model.py``; ``CIFAR100/C3-SL/train.sh`` runs ``--bcr 16`` at
    batch 64. Deviations: the released training drops a batch's last ``B mod R`` samples (``train.py``),
    here they are padded; the keys come from a generator seeded by ``seed``, not the global stream.

    Paper: Hsieh et al., "C3-SL: Circular Convolution-Based Batch-Wise Compression for
    Communication-Efficient Split Learning", IEEE MLSP 2022 (arXiv:2207.12397).
    Threat model: honest-but-curious server that holds the keys and receives each group's superposed
    row; it sees each sample only through its unbinding, ``z`` plus the group's crosstalk.

    Args:
        cut_shape: per-sample shape of the cut activation.
        cr: the group size ``R`` (an integer ≥ 2).
        seed: seed of the keys.
    """

    knobs = (CR,)

    def __init__(self, *, cut_shape: tuple[int, ...], cr: float | None = None, seed: int = 0) -> None:
        super().__init__(cut_shape=cut_shape, seed=seed)
        self.group_size = require_group_size(cr)
        self.normalise = len(self.cut_shape) == 1  # the released linear split
        self.register_buffer("keys", released_keys(self.group_size, self.d, seed))

    def encode(self, z: Tensor) -> GroupedPayload:
        flat = z.flatten(1)
        if self.normalise:
            flat = normalise_for_binding(flat)
        samples, r = len(flat), self.group_size
        groups = math.ceil(samples / r)
        padded = torch.cat([flat, flat.new_zeros(groups * r - samples, self.d)])
        rows = circular_convolution(self.keys, padded.view(groups, r, self.d)).sum(1)
        return GroupedPayload.in_order(rows, samples, r)

    def decode(self, payload: Payload) -> Tensor:
        if not isinstance(payload, GroupedPayload):
            raise TypeError(f"c3sl decodes grouped payloads, got {type(payload).__name__}")
        maps = circular_correlation(self.keys[payload.slot_of], payload.rows.flatten(1)[payload.row_of])
        return maps.view(-1, *self.cut_shape)

    def public_state(self) -> dict[str, Tensor]:
        return {"keys": self.keys}
