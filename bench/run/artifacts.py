"""Small figures saved beside a cell's record: the reconstruction grid (truth above, reconstruction below)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch
from torch import Tensor


def save_reconstruction_grid(path: Path, truth: Tensor, recon: Tensor, *, n: int = 8) -> None:
    """Write a PNG with ``n`` targets: truths in the top row, reconstructions below (atomically)."""
    n = min(n, len(truth))
    grid = torch.cat([truth[:n], recon[:n].clamp(0, 1)])
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".png")
    os.close(fd)
    try:
        from PIL import Image
        from torchvision.utils import make_grid  # imported here: torchvision is slow to import

        pixels = make_grid(grid, nrow=n, padding=2, pad_value=1.0).mul(255).add_(0.5).clamp_(0, 255)
        pixels = pixels.permute(1, 2, 0).to("cpu", torch.uint8).numpy()
        # make_grid repeats a single channel three times; a grey grid is stored as one (a third the bytes,
        # which the device's 64 MiB tree limit counts)
        Image.fromarray(pixels[..., 0] if truth.shape[1] == 1 else pixels).save(tmp, format="PNG", optimize=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
