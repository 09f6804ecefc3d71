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
        from torchvision.utils import save_image  # imported here: torchvision is slow to import

        save_image(grid, tmp, nrow=n, padding=2, pad_value=1.0)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
