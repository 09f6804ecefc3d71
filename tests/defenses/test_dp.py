import pytest
import torch

from defenses import build_defense
from defenses.dp import GaussianPayloadNoise


def test_without_noise_clipping_bounds_norms_at_the_batch_median():
    dp = GaussianPayloadNoise(sigma=0.0).train()
    x = torch.randn(101, 50) * torch.linspace(0.1, 10, 101).unsqueeze(1)
    median = x.norm(dim=1).median()
    out = dp(x)
    norms = out.norm(dim=1)
    assert norms.max() <= median * (1 + 1e-5)
    clipped = (x.norm(dim=1) > median).sum()
    assert clipped == 50  # half the payloads are clipped
    unchanged = x.norm(dim=1) <= median
    assert torch.allclose(out[unchanged], x[unchanged])


def test_noise_is_applied_at_evaluation_with_std_sigma_times_clip():
    dp = GaussianPayloadNoise(sigma=0.5).train()
    x = torch.randn(64, 400)
    dp(x)  # calibrates the clip
    clip = float(dp.clip_norm)
    dp.eval()
    tiny = x[:1] * 1e-3  # far below the clip: only noise changes it
    a, b = dp(tiny), dp(tiny)
    assert not torch.equal(a, b)
    noise = torch.cat([dp(tiny) - tiny for _ in range(50)])
    assert noise.std().item() == pytest.approx(0.5 * clip, rel=0.05)


def test_composition_keeps_the_payload_size_and_adds_the_sigma_knob():
    defense = build_defense("lightsplit-f+dp", cut_shape=(8, 12, 12), seed=0, cr=8, sigma=0.02)
    assert [k.name for k in defense.knobs] == ["cr", "sigma"]
    assert defense.encode(torch.randn(4, 8, 12, 12)).shape == (4, 144)
    assert "R" in defense.public_state()


def test_dp_alone_is_raw_plus_noise():
    defense = build_defense("dp", cut_shape=(8, 12, 12), seed=0, sigma=0.0).train()
    z = torch.randn(4, 8, 12, 12) * 1e-4
    defense.encode(torch.randn(64, 8, 12, 12))
    defense.eval()
    assert torch.allclose(defense.decode(defense.encode(z)), z)  # under the clip, σ = 0


@pytest.mark.parametrize("sigma", [-0.1])
def test_negative_sigma_is_refused(sigma):
    with pytest.raises(ValueError):
        GaussianPayloadNoise(sigma=sigma)


def test_one_clip_per_configuration_fixed_by_calibration_in_training_and_evaluation():
    defense = build_defense("raw+dp", cut_shape=(50,), seed=0, sigma=0.0).train()
    members = torch.randn(300, 50) * torch.linspace(0.5, 2, 300).unsqueeze(1)
    defense.calibrate(members)
    clip = members.norm(dim=1).median()
    assert float(defense.client_side.transforms[0].clip_norm) == pytest.approx(float(clip))
    big = torch.randn(64, 50) * 100  # a batch whose own median is far larger
    for mode in (defense.train, defense.eval):
        mode()
        assert defense.encode(big).norm(dim=1).max() <= clip * (1 + 1e-5)
    assert float(defense.client_side.transforms[0].clip_norm) == pytest.approx(float(clip))  # never drifts
