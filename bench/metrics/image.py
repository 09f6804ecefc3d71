"""Image reconstruction metrics: whole-image and foreground-masked (LightSplit App. B-C3/B-D).

Images are float tensors ``(N, C, H, W)``; the truth must lie in ``[0, 1]`` (a ``ValueError``
otherwise) and reconstructions are clamped into ``[0, 1]`` before any score. Every metric is
computed per image; :func:`image_metrics` reports means over images.
"""
from __future__ import annotations

import math
import os

import numpy as np
import piq
import torch
import torch.nn.functional as F

from bench.metrics.lpips_weights import build_lpips, resolve_weights, unavailable_reason

PSNR_CAP_DB = 100.0
SSIM_KERNEL = 11  # piq.ssim defaults: Gaussian kernel 11, sigma 1.5, k1 0.01, k2 0.03
FOREGROUND_THRESHOLD = 0.1
LPIPS_MIN_SIDE = 32  # AlexNet's second max-pool needs >= 31 px of input


def _pair(recon: torch.Tensor, truth: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Validate a (recon, truth) pair; return float copies with recon clamped into [0, 1]."""
    if recon.shape != truth.shape or truth.dim() != 4:
        raise ValueError(f"expected two (N, C, H, W) tensors of one shape, got {tuple(recon.shape)} and {tuple(truth.shape)}")
    truth = truth.detach().float()
    if truth.numel() and (truth.min() < 0 or truth.max() > 1):
        raise ValueError(f"truth must lie in [0, 1], got [{truth.min().item():.3g}, {truth.max().item():.3g}]")
    return recon.detach().float().to(truth.device).clamp(0.0, 1.0), truth


def mse(recon: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """Per-image mean squared error over all channels and pixels, shape ``(N,)``."""
    recon, truth = _pair(recon, truth)
    return (recon - truth).pow(2).flatten(1).mean(dim=1)


def _psnr_from_mse(err: torch.Tensor) -> torch.Tensor:
    # MSE = 0 gives +inf; the cap keeps means finite. NaN stays NaN.
    return (-10.0 * torch.log10(err)).clamp(max=PSNR_CAP_DB)


def psnr(recon: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """Per-image PSNR in dB for data range 1: ``-10 log10(MSE)``, capped at 100 dB (MSE = 0)."""
    return _psnr_from_mse(mse(recon, truth))


def _pad_to(x: torch.Tensor, size: int) -> torch.Tensor:
    """Zero-pad the last two dims symmetrically (extra pixel after) up to at least ``size``."""
    dh, dw = max(0, size - x.shape[-2]), max(0, size - x.shape[-1])
    if dh == 0 and dw == 0:
        return x
    return F.pad(x, (dw // 2, dw - dw // 2, dh // 2, dh - dh // 2))


def ssim(recon: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """Per-image SSIM, shape ``(N,)``, via ``piq.ssim`` with its defaults and data range 1.

    Images with a side under the 11-px kernel are zero-padded symmetrically (both images) to 11.
    """
    recon, truth = _pair(recon, truth)
    if len(truth) == 0:
        return truth.new_zeros(0)
    x, y = _pad_to(recon, SSIM_KERNEL), _pad_to(truth, SSIM_KERNEL)
    return piq.ssim(x, y, data_range=1.0, reduction="none")


def foreground_mask(truth: torch.Tensor) -> torch.Tensor:
    """Boolean ``(N, H, W)`` mask of pixels where the truth exceeds 0.1 in any channel."""
    return (truth > FOREGROUND_THRESHOLD).any(dim=1)


def foreground_ratio(truth: torch.Tensor) -> torch.Tensor:
    """Per-image fraction of pixels in the foreground mask, shape ``(N,)``."""
    return foreground_mask(truth).flatten(1).float().mean(dim=1)


def masked_mse(recon: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """Per-image MSE over foreground-mask pixels only (all channels); NaN for an empty mask."""
    recon, truth = _pair(recon, truth)
    mask = foreground_mask(truth).unsqueeze(1).float()
    count = mask.flatten(1).sum(dim=1) * truth.shape[1]
    total = ((recon - truth).pow(2) * mask).flatten(1).sum(dim=1)
    return torch.where(count > 0, total / count.clamp(min=1), torch.full_like(total, math.nan))


def masked_psnr(recon: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """Per-image PSNR of :func:`masked_mse`, capped at 100 dB; NaN for an empty mask."""
    return _psnr_from_mse(masked_mse(recon, truth))


def bounding_box(mask: torch.Tensor) -> tuple[int, int, int, int] | None:
    """Tight box ``(top, bottom, left, right)`` (end-exclusive) of a 2-D mask; None if empty."""
    rows, cols = torch.nonzero(mask.any(dim=1)).flatten(), torch.nonzero(mask.any(dim=0)).flatten()
    if len(rows) == 0:
        return None
    return int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1


def _widen(start: int, end: int, side: int, size: int) -> tuple[int, int]:
    """Grow ``[start, end)`` to ``size`` around its centre, shifted to stay inside ``[0, side)``."""
    if end - start >= size or side <= size:
        return (start, end) if end - start >= size else (0, side)
    lo = min(max(0, (start + end - size) // 2), side - size)
    return lo, lo + size


def box_ssim(recon: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """Per-image SSIM on the tight bounding box of the foreground mask; NaN for an empty mask.

    A box side under 11 px is widened around its centre to 11 px inside the image (or to the whole
    image, then zero-padded, when the image itself is under 11 px).
    """
    recon, truth = _pair(recon, truth)
    out = torch.full((len(truth),), math.nan, device=truth.device)
    height, width = truth.shape[-2:]
    crops: dict[tuple[int, int], list[tuple[int, int, int]]] = {}  # box size -> (image, top, left) of each box
    for i, mask in enumerate(foreground_mask(truth)):
        box = bounding_box(mask)
        if box is None:
            continue
        top, bottom = _widen(box[0], box[1], height, SSIM_KERNEL)
        left, right = _widen(box[2], box[3], width, SSIM_KERNEL)
        crops.setdefault((bottom - top, right - left), []).append((i, top, left))
    for (h, w), boxes in crops.items():  # one SSIM call per box size: SSIM scores each image of a batch alone
        x = torch.stack([recon[i, :, top : top + h, left : left + w] for i, top, left in boxes])
        y = torch.stack([truth[i, :, top : top + h, left : left + w] for i, top, left in boxes])
        out[[i for i, _, _ in boxes]] = ssim(x, y)
    return out


def minmax_normalise(images: torch.Tensor) -> torch.Tensor:
    """Per-image min-max rescale to ``[0, 1]`` (UnSplit's released CIFAR scoring).

    A constant image maps to all zeros.
    """
    flat = images.detach().float().flatten(1)
    lo, hi = flat.min(dim=1, keepdim=True).values, flat.max(dim=1, keepdim=True).values
    span = torch.where(hi > lo, hi - lo, torch.ones_like(hi))
    return ((flat - lo) / span).view_as(images)


def lpips_unavailable_reason(weights: str | os.PathLike | None = None) -> str | None:
    """One-line reason LPIPS (AlexNet) cannot run offline, or None when its weights are on disk.

    Checks the AlexNet file ``weights`` (default: torchvision's checkpoint in
    ``torch.hub.get_dir()/checkpoints/``) and the linear layers shipped inside the ``lpips``
    package; never downloads anything.
    """
    return unavailable_reason(weights)


_MODELS: dict[tuple[str, str], torch.nn.Module] = {}  # (trunk file, device) -> model, for this process


def _to_lpips_input(images: torch.Tensor) -> torch.Tensor:
    """Grayscale to 3 channels, [0, 1] to [-1, 1], and upsample (bilinear, aspect kept) to >= 32 px."""
    if images.shape[1] == 1:
        images = images.repeat(1, 3, 1, 1)
    side = min(images.shape[-2:])
    if side < LPIPS_MIN_SIDE:
        scale = LPIPS_MIN_SIDE / side
        size = (max(LPIPS_MIN_SIDE, round(images.shape[-2] * scale)), max(LPIPS_MIN_SIDE, round(images.shape[-1] * scale)))
        images = F.interpolate(images, size=size, mode="bilinear", align_corners=False)
    return images * 2.0 - 1.0


class LpipsScorer:
    """LPIPS with the AlexNet trunk (``lpips`` package, ``net="alex"``), loaded lazily and cached.

    Inputs smaller than 32 px on a side are upsampled bilinearly (aspect ratio kept) so that the
    shorter side is 32 px; grayscale is repeated to 3 channels and [0, 1] is mapped to [-1, 1].
    The AlexNet trunk is read from ``weights``, else from torchvision's cached checkpoint
    (:mod:`bench.metrics.lpips_weights`); nothing is ever downloaded. When the weights are not on
    disk every call returns ``(None, reason)``; no other number is substituted.

    Args:
        model: An LPIPS-compatible module ``f(x, y) -> (N, 1, 1, 1)`` to use instead of the
            pretrained one (tests); skips the weight check.
        batch_size: Images per forward pass.
        weights: A torchvision AlexNet ``state_dict`` file for the trunk (``--lpips-weights``).
    """

    def __init__(
        self, model: torch.nn.Module | None = None, batch_size: int = 256, *, weights: str | os.PathLike | None = None
    ) -> None:
        self.model = model
        self.batch_size = batch_size
        self.weights = weights

    def _load(self, device: torch.device) -> tuple[torch.nn.Module | None, str | None]:
        if self.model is not None:
            return self.model.to(device), None
        reason = unavailable_reason(self.weights)
        if reason is not None:
            return None, reason
        key = (str(resolve_weights(self.weights)), str(device))
        if key not in _MODELS:
            try:
                _MODELS[key] = build_lpips(key[0]).to(device)
            except Exception as err:  # noqa: BLE001 - a broken checkpoint must not end the run
                return None, f"LPIPS unavailable: loading failed ({type(err).__name__}: {err})".replace("\n", " ")
        return _MODELS[key], None

    def _score(self, model: torch.nn.Module, recon: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
        values = []
        with torch.no_grad():
            for start in range(0, len(truth), self.batch_size):
                stop = start + self.batch_size
                x, y = _to_lpips_input(recon[start:stop]), _to_lpips_input(truth[start:stop])
                values.append(model(x, y).flatten().float())
        return torch.cat(values) if values else truth.new_zeros(0)

    def _ready(self, truth: torch.Tensor) -> tuple[torch.nn.Module | None, str | None]:
        if truth.shape[1] not in (1, 3):
            return None, f"LPIPS unavailable: needs 1 or 3 channels, got {truth.shape[1]}"
        return self._load(truth.device)

    def __call__(self, recon: torch.Tensor, truth: torch.Tensor) -> tuple[torch.Tensor | None, str | None]:
        """Per-image LPIPS distance ``(N,)`` (lower is closer), or ``(None, reason)``."""
        recon, truth = _pair(recon, truth)
        model, reason = self._ready(truth)
        return (None, reason) if model is None else (self._score(model, recon, truth), None)

    def box(self, recon: torch.Tensor, truth: torch.Tensor) -> tuple[torch.Tensor | None, str | None]:
        """Per-image LPIPS on the tight bounding box of the foreground mask; NaN for an empty mask.

        The box is not widened; a side under 32 px is upsampled as for whole images.
        """
        recon, truth = _pair(recon, truth)
        model, reason = self._ready(truth)
        if model is None:
            return None, reason
        out = torch.full((len(truth),), math.nan, device=truth.device)
        for i, mask in enumerate(foreground_mask(truth)):
            box = bounding_box(mask)
            if box is not None:
                top, bottom, left, right = box
                crop = (slice(i, i + 1), slice(None), slice(top, bottom), slice(left, right))
                out[i] = self._score(model, recon[crop], truth[crop])[0]
        return out, None


def lpips_distance(recon: torch.Tensor, truth: torch.Tensor) -> tuple[torch.Tensor | None, str | None]:
    """Per-image LPIPS (AlexNet) with a cached model; ``(None, reason)`` when weights are absent."""
    return LpipsScorer()(recon, truth)


def box_lpips(recon: torch.Tensor, truth: torch.Tensor) -> tuple[torch.Tensor | None, str | None]:
    """Per-image LPIPS on the foreground bounding box; see :meth:`LpipsScorer.box`."""
    return LpipsScorer().box(recon, truth)


def _mean(name: str, values: torch.Tensor, notes: dict[str, str]) -> float | None:
    """nanmean of per-image values; notes how many images were left out as NaN."""
    array = values.detach().double().cpu().numpy()
    missing = int(np.isnan(array).sum())
    if missing:
        notes[name] = f"{missing} of {len(array)} images have an empty foreground mask (truth <= 0.1); left out of the mean"
    if missing == len(array):
        return None
    return float(np.nanmean(array))


def image_metrics(
    recon: torch.Tensor, truth: torch.Tensor, *, masked: bool, lpips_scorer: LpipsScorer | None = None
) -> tuple[dict[str, float | None], dict[str, str]]:
    """Means over images of the image metrics, and notes (metric name → reason) for missing ones.

    Args:
        recon: Reconstructions ``(N, C, H, W)``; clamped into ``[0, 1]``.
        truth: Ground truth ``(N, C, H, W)`` in ``[0, 1]``.
        masked: Also report the foreground-masked variants (MNIST-like data on black).
        lpips_scorer: LPIPS scorer to use; a default :class:`LpipsScorer` if None.

    Returns:
        ``mse, psnr, ssim, lpips`` and, when ``masked``, ``masked_mse, masked_psnr, box_ssim,
        box_lpips, foreground_ratio``. A value is None when it cannot be computed (LPIPS weights
        absent, every mask empty, no images); its note says why.
    """
    recon, truth = _pair(recon, truth)
    scorer = lpips_scorer or LpipsScorer()
    notes: dict[str, str] = {}
    metrics: dict[str, float | None] = {}
    per_image: dict[str, tuple[torch.Tensor | None, str | None]] = {
        "mse": (mse(recon, truth), None),
        "psnr": (psnr(recon, truth), None),
        "ssim": (ssim(recon, truth), None),
        "lpips": scorer(recon, truth),
    }
    if masked:
        per_image.update({
            "masked_mse": (masked_mse(recon, truth), None),
            "masked_psnr": (masked_psnr(recon, truth), None),
            "box_ssim": (box_ssim(recon, truth), None),
            "box_lpips": scorer.box(recon, truth),
            "foreground_ratio": (foreground_ratio(truth), None),
        })
    for name, (values, reason) in per_image.items():
        if values is None:
            metrics[name], notes[name] = None, reason or "unavailable"
        elif len(values) == 0:
            metrics[name], notes[name] = None, "no images to score"
        else:
            metrics[name] = _mean(name, values, notes)
    return metrics, notes
