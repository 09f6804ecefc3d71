import pytest
import torch

from attacks.sdar_diagnostics import simulator_gap


def test_a_simulator_on_the_payload_distribution_scores_at_the_floor_and_a_shifted_one_far_above():
    g = torch.Generator().manual_seed(0)
    payload_maps = torch.randn(400, 8, 4, 4, generator=g)
    aux = torch.rand(400, 1, 8, 8, generator=g)
    on = lambda x: torch.randn(len(x), 8, 4, 4, generator=g)  # noqa: E731  (same distribution as the targets)
    off = lambda x: 0.5 * torch.randn(len(x), 8, 4, 4, generator=g) + 1.0  # noqa: E731
    healthy = simulator_gap(simulate=on, target_maps=payload_maps, reconstructions=torch.rand(400, 1, 8, 8,
                                                                                              generator=g),
                            aux_inputs=aux)
    collapsed = simulator_gap(simulate=off, target_maps=payload_maps, reconstructions=torch.zeros(400, 1, 8, 8),
                              aux_inputs=aux)
    floor = abs(healthy["sdar_payload_mmd_floor"])
    assert abs(healthy["sdar_payload_mmd"]) < 5 * floor + 1e-3
    assert collapsed["sdar_payload_mmd"] > 20 * (floor + 1e-3)
    assert collapsed["sdar_image_mmd"] > 20 * (abs(collapsed["sdar_image_mmd_floor"]) + 1e-3)
    assert abs(healthy["sdar_image_mmd"]) < 5 * abs(healthy["sdar_image_mmd_floor"]) + 1e-3


def test_uses_the_first_samples_only_and_needs_four():
    maps, aux = torch.randn(10, 3), torch.rand(10, 2)
    seen = []
    simulator_gap(simulate=lambda x: seen.append(x) or torch.randn(len(x), 3), target_maps=maps,
                  reconstructions=aux, aux_inputs=aux, samples=6)
    assert torch.equal(seen[0], aux[:3])
    with pytest.raises(ValueError, match="at least 4"):
        simulator_gap(simulate=lambda x: x, target_maps=maps[:3], reconstructions=aux[:3], aux_inputs=aux[:3])
