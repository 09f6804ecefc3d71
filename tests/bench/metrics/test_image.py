import math
import os
from types import SimpleNamespace

import numpy as np
import piq
import pytest
import torch
import torch.nn.functional as F
import torchvision

from bench.metrics import (
    LpipsScorer,
    bounding_box,
    box_lpips,
    box_ssim,
    foreground_ratio,
    image_metrics,
    lpips_distance,
    lpips_unavailable_reason,
    masked_mse,
    masked_psnr,
    minmax_normalise,
    mse,
    psnr,
    ssim,
)
from bench.metrics.image import _to_lpips_input

ALL_NAMES = ["mse", "psnr", "ssim", "lpips", "masked_mse", "masked_psnr", "box_ssim", "box_lpips", "foreground_ratio"]


def _images(n: int = 4, c: int = 1, side: int = 28, seed: int = 0) -> torch.Tensor:
    return torch.rand(n, c, side, side, generator=torch.Generator().manual_seed(seed))


def _alexnet_checkpoint(hub_dir: str) -> str:
    name = os.path.basename(torchvision.models.AlexNet_Weights.IMAGENET1K_V1.url)
    return os.path.join(hub_dir, "checkpoints", name)


@pytest.fixture
def empty_hub(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path))
    return str(tmp_path)


def _alexnet_features_only(**_: object) -> SimpleNamespace:
    """torchvision's AlexNet ``features`` without its 58M-parameter classifier (slow to initialise)."""
    nn = torch.nn
    return SimpleNamespace(features=nn.Sequential(
        nn.Conv2d(3, 64, 11, stride=4, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
        nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
        nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
    ))


@pytest.fixture(scope="module")
def random_trunk_lpips():
    """Real LPIPS network (the package's linear layers) on a random AlexNet trunk: no download."""
    import lpips
    import lpips.pretrained_networks

    torch.manual_seed(0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lpips.pretrained_networks.tv, "alexnet", _alexnet_features_only)
        return lpips.LPIPS(net="alex", pnet_rand=True, verbose=False).eval()


def test_identical_images_score_perfectly():
    truth = _images(c=3, side=16)
    assert torch.equal(mse(truth, truth), torch.zeros(4))
    assert torch.equal(psnr(truth, truth), torch.full((4,), 100.0))
    torch.testing.assert_close(ssim(truth, truth), torch.ones(4))


def test_mse_matches_a_numpy_loop():
    recon, truth = _images(3, 3, 9, seed=1), _images(3, 3, 9, seed=2)
    r, t = recon.numpy().astype(np.float64), truth.numpy().astype(np.float64)
    expected = []
    for i in range(3):
        total = 0.0
        for c in range(3):
            for y in range(9):
                for x in range(9):
                    total += (r[i, c, y, x] - t[i, c, y, x]) ** 2
        expected.append(total / (3 * 9 * 9))
    np.testing.assert_allclose(mse(recon, truth).numpy(), expected, rtol=1e-5)


def test_psnr_of_a_known_mse_and_clamping():
    truth = _images() * 0.8
    assert psnr(truth + 0.1, truth) == pytest.approx(torch.full((4,), 20.0), abs=1e-3)  # MSE 0.01
    assert psnr(truth + 0.01, truth) == pytest.approx(torch.full((4,), 40.0), abs=1e-2)  # MSE 1e-4
    ones = torch.ones(2, 1, 4, 4)
    assert torch.equal(mse(ones + 5.0, ones), torch.zeros(2))  # recon clamped into [0, 1]
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        mse(ones, ones * 2)


def test_masked_mse_counts_only_pixels_where_truth_exceeds_threshold():
    truth = torch.zeros(1, 3, 4, 4)
    truth[0, 0, :2, :2] = 0.5  # 4 foreground pixels via channel 0 only ("any channel")
    truth[0, 1, 3, 3] = 0.1  # exactly the threshold: background
    recon = truth.clone()
    recon[0, :, :2, :2] += 0.2  # error 0.04 on every channel of the 4 foreground pixels
    assert masked_mse(recon, truth).item() == pytest.approx(0.04)
    assert mse(recon, truth).item() == pytest.approx(0.04 * 4 / 16)  # masked = whole / foreground ratio
    assert foreground_ratio(truth).item() == pytest.approx(4 / 16)
    assert masked_psnr(recon, truth).item() == pytest.approx(-10 * math.log10(0.04), abs=1e-4)
    recon[0, :, 2:, 2:] = 1.0  # background error changes mse, not masked_mse
    assert masked_mse(recon, truth).item() == pytest.approx(0.04)
    assert mse(recon, truth).item() > 0.04 * 4 / 16


def test_empty_mask_is_nan_and_left_out_of_means(empty_hub):
    truth = torch.zeros(2, 1, 12, 12)
    truth[0, 0, 2:6, 3:9] = 0.9
    recon = (truth + 0.1).clamp(0, 1)
    assert math.isnan(masked_mse(recon, truth)[1]) and math.isnan(box_ssim(recon, truth)[1])
    metrics, notes = image_metrics(recon, truth, masked=True)
    assert list(metrics) == ALL_NAMES
    assert metrics["masked_mse"] == pytest.approx(masked_mse(recon, truth)[0].item())
    assert "1 of 2 images" in notes["masked_mse"] and "1 of 2 images" in notes["box_ssim"]
    assert metrics["foreground_ratio"] == pytest.approx(24 / 144 / 2)
    metrics, notes = image_metrics(recon[1:], truth[1:], masked=True)
    assert metrics["masked_psnr"] is None and "1 of 1 images" in notes["masked_psnr"]


def test_bounding_box_and_box_ssim_equal_a_hand_made_crop():
    truth = torch.zeros(1, 1, 20, 20)
    truth[0, 0, 3:17, 5:18] = torch.rand(14, 13) * 0.5 + 0.3
    recon = (truth + 0.2 * torch.rand_like(truth)).clamp(0, 1)
    assert bounding_box(truth[0, 0] > 0.1) == (3, 17, 5, 18)
    expected = piq.ssim(recon[:, :, 3:17, 5:18], truth[:, :, 3:17, 5:18], data_range=1.0, reduction="none")
    torch.testing.assert_close(box_ssim(recon, truth), expected)
    assert not torch.allclose(box_ssim(recon, truth), ssim(recon, truth))


def test_a_batch_of_mixed_boxes_scores_each_image_as_it_would_alone():
    """Boxes of one size at other places, another size, one widened, an empty mask: box SSIM of the
    batch is each image's own box SSIM, in its own place (images of one box size are scored together)."""
    torch.manual_seed(0)
    truth = torch.zeros(6, 1, 20, 20)
    for i, (top, left, h, w) in enumerate([(2, 3, 12, 14), (6, 1, 12, 14), (0, 0, 17, 11), (5, 5, 3, 3), (8, 4, 12, 14)]):
        truth[i, 0, top : top + h, left : left + w] = torch.rand(h, w) * 0.6 + 0.3
    recon = (truth + 0.4 * torch.rand_like(truth)).clamp(0, 1)  # image 5: an empty mask
    alone = torch.cat([box_ssim(recon[i : i + 1], truth[i : i + 1]) for i in range(6)])
    torch.testing.assert_close(box_ssim(recon, truth), alone, equal_nan=True)
    assert len(set(alone[:5].tolist())) == 5 and math.isnan(alone[5])


def test_small_box_is_widened_to_eleven_pixels_inside_the_image():
    truth = torch.zeros(1, 1, 20, 20)
    truth[0, 0, 0:3, 8:11] = 0.8  # 3x3 box at the top edge: rows -> [0, 11), cols -> [4, 15)
    recon = (truth + 0.3 * torch.rand_like(truth)).clamp(0, 1)
    expected = piq.ssim(recon[:, :, 0:11, 4:15], truth[:, :, 0:11, 4:15], data_range=1.0, reduction="none")
    torch.testing.assert_close(box_ssim(recon, truth), expected)


def test_images_under_the_kernel_are_zero_padded_symmetrically():
    truth, recon = _images(2, 1, 8, seed=3), _images(2, 1, 8, seed=4)
    pad = (1, 2, 1, 2)  # 8 -> 11
    expected = piq.ssim(F.pad(recon, pad), F.pad(truth, pad), data_range=1.0, reduction="none")
    torch.testing.assert_close(ssim(recon, truth), expected)
    full = torch.zeros(1, 1, 8, 8)
    full[0, 0, 2:5, 2:5] = 0.7
    torch.testing.assert_close(box_ssim(full * 0.5, full), ssim(full * 0.5, full))  # whole image, padded


def test_ssim_decreases_with_noise():
    truth = _images(2, 3, 32, seed=5)
    generator = torch.Generator().manual_seed(6)
    noise = torch.randn(truth.shape, generator=generator)
    scores = [ssim((truth + level * noise).clamp(0, 1), truth).mean().item() for level in (0.0, 0.05, 0.1, 0.3)]
    assert scores[0] == pytest.approx(1.0)
    assert all(a > b for a, b in zip(scores, scores[1:]))


def test_minmax_normalise_per_image():
    images = torch.stack([torch.full((1, 2, 2), 3.0), torch.tensor([[[-1.0, 0.0], [1.0, 3.0]]])])
    out = minmax_normalise(images)
    assert torch.equal(out[0], torch.zeros(1, 2, 2))  # constant image
    torch.testing.assert_close(out[1], torch.tensor([[[0.0, 0.25], [0.5, 1.0]]]))


def test_lpips_absent_weights_give_none_and_a_one_line_reason(empty_hub):
    truth = _images()
    checkpoint = _alexnet_checkpoint(empty_hub)
    values, reason = lpips_distance(truth, truth)
    assert values is None and checkpoint in reason and "\n" not in reason
    assert reason == lpips_unavailable_reason()
    assert box_lpips(truth, truth) == (None, reason)
    metrics, notes = image_metrics(truth, truth, masked=True)
    assert metrics["lpips"] is None and metrics["box_lpips"] is None
    assert notes["lpips"] == reason and notes["box_lpips"] == reason
    assert metrics["mse"] == 0.0


def test_lpips_absent_linear_layers_are_reported(empty_hub, monkeypatch, tmp_path):
    import lpips

    os.makedirs(os.path.dirname(_alexnet_checkpoint(empty_hub)))
    open(_alexnet_checkpoint(empty_hub), "wb").close()
    monkeypatch.setattr(lpips, "__file__", str(tmp_path / "nowhere" / "__init__.py"))
    reason = lpips_unavailable_reason()
    assert reason is not None and str(tmp_path / "nowhere" / "weights" / "v0.1" / "alex.pth") in reason


def test_lpips_input_preparation():
    gray = torch.linspace(0, 1, 10).repeat(28, 1).view(1, 1, 28, 10)
    out = _to_lpips_input(gray)
    assert out.shape == (1, 3, 90, 32)  # shorter side to 32, aspect ratio kept
    assert out.min() == pytest.approx(-1.0) and out.max() == pytest.approx(1.0)
    assert _to_lpips_input(torch.rand(2, 3, 32, 40)).shape == (2, 3, 32, 40)


def test_lpips_plumbing_with_a_random_trunk(random_trunk_lpips):
    scorer = LpipsScorer(model=random_trunk_lpips)
    truth = torch.zeros(3, 1, 28, 28)
    truth[0, 0, 5:20, 8:14] = 0.9
    truth[1, 0, 10:12, 3:25] = 0.6
    noisy = (truth + 0.3 * _images(3, 1, 28, seed=7)).clamp(0, 1)
    same, reason = scorer(truth, truth)
    assert reason is None and torch.allclose(same, torch.zeros(3), atol=1e-6)
    different, _ = scorer(noisy, truth)
    assert (different > 0).all()
    boxed, _ = scorer.box(noisy, truth)
    assert (boxed[:2] > 0).all() and math.isnan(boxed[2])
    metrics, notes = image_metrics(noisy, truth, masked=True, lpips_scorer=scorer)
    assert metrics["lpips"] == pytest.approx(different.mean().item())
    assert metrics["box_lpips"] == pytest.approx(boxed[:2].mean().item())
    assert "lpips" not in notes and "1 of 3 images" in notes["box_lpips"]


@pytest.mark.skipif(lpips_unavailable_reason() is not None, reason="LPIPS AlexNet weights not on disk")
def test_lpips_with_pretrained_weights_is_zero_for_identical_images():
    truth = _images(2, 3, 32)
    values, reason = lpips_distance(truth, truth)
    assert reason is None and torch.allclose(values, torch.zeros(2), atol=1e-6)
