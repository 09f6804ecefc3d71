"""The reconstruction grid: the pixels torchvision's ``save_image`` writes, grey grids in one channel."""
from __future__ import annotations

import numpy as np
import torch
from PIL import Image
from torchvision.utils import save_image

from bench.run.artifacts import save_reconstruction_grid


def _reference(tmp_path, truth, recon, n):
    path = tmp_path / "reference.png"
    save_image(torch.cat([truth[:n], recon[:n].clamp(0, 1)]), path, nrow=n, padding=2, pad_value=1.0)
    return np.asarray(Image.open(path))


def test_a_grey_grid_is_one_channel_with_torchvisions_pixels(tmp_path):
    torch.manual_seed(0)
    truth, recon = torch.rand(5, 1, 6, 6), torch.rand(5, 1, 6, 6) * 1.4 - 0.2
    save_reconstruction_grid(tmp_path / "g.png", truth, recon, n=4)
    written = Image.open(tmp_path / "g.png")
    assert written.mode == "L"
    np.testing.assert_array_equal(np.asarray(written), _reference(tmp_path, truth, recon, 4)[..., 0])


def test_a_colour_grid_keeps_three_channels_with_torchvisions_pixels(tmp_path):
    torch.manual_seed(1)
    truth, recon = torch.rand(3, 3, 5, 5), torch.rand(3, 3, 5, 5)
    save_reconstruction_grid(tmp_path / "c.png", truth, recon, n=8)
    written = Image.open(tmp_path / "c.png")
    assert written.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(written), _reference(tmp_path, truth, recon, 3))
