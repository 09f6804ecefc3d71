import pytest
import torch

from defenses import build_defense
from defenses.payload import SparsePayload, cross_to_server, nbytes, wire_tensors

CUT = (8, 12, 12)


@pytest.mark.parametrize("cr", [8, 16, 32])
def test_topk_keeps_floor_4k_over_6_largest_values(cr):
    defense = build_defense("topk", cut_shape=CUT, seed=0, cr=cr)
    k = 1152 // cr
    z = torch.randn(4, *CUT)
    payload = defense.encode(z)
    assert isinstance(payload, SparsePayload)
    dense = defense.decode(payload).flatten(1)
    assert ((dense != 0).sum(1) == (4 * k) // 6).all()
    # the kept values are the largest in magnitude, at their own coordinates
    threshold = z.flatten(1).abs().topk((4 * k) // 6, dim=1).values[:, -1:]
    kept = dense != 0
    assert torch.equal(kept, z.flatten(1).abs() >= threshold)
    assert torch.equal(dense[kept], z.flatten(1)[kept])
    # values (4 B) + int16 positions (2 B) fit in the wire budget of k floats
    assert nbytes(wire_tensors(payload)) / 4 <= 4 * k


def test_topk_gradient_flows_only_through_kept_values():
    defense = build_defense("topk", cut_shape=CUT, seed=0, cr=8)
    z = torch.randn(2, *CUT, requires_grad=True)
    payload = defense.encode(z)
    received = cross_to_server(payload)
    defense.decode(received).sum().backward()
    payload.values.backward(received.values.grad)
    kept = defense.decode(payload).detach().flatten(1) != 0
    assert torch.equal(z.grad.flatten(1) != 0, kept)


@pytest.mark.parametrize("cr,channels", [(8, 1), (4, 2), (2, 4)])
def test_learned_1x1_rounds_to_channels_and_records_realised_cr(cr, channels):
    defense = build_defense("learned-1x1", cut_shape=CUT, seed=0, cr=cr)
    assert defense.code_channels == channels
    assert defense.encode(torch.randn(2, *CUT)).shape == (2, channels, 12, 12)
    assert defense.describe()["realized_cr"] == pytest.approx(8 / channels)
    assert len(defense.client_parameters()) == 2 and len(defense.server_parameters()) == 2


def test_learned_1x1_on_a_vector_cut_is_linear():
    defense = build_defense("learned-1x1", cut_shape=(256,), seed=0, cr=16)
    assert defense.encode(torch.randn(3, 256)).shape == (3, 16)


def test_raw_is_identity():
    defense = build_defense("raw", cut_shape=CUT, seed=0)
    z = torch.randn(2, *CUT)
    assert torch.equal(defense.decode(defense.encode(z)), z)


def test_a_sparse_payload_of_blocks_places_each_run_of_values_at_its_index():
    from defenses.payload import SparsePayload, concat, take

    values = torch.arange(12.0).view(2, 6)  # per sample: 2 blocks of 3 values
    payload = SparsePayload(values, torch.tensor([[3, 0], [1, 2]], dtype=torch.uint8), 12, block=3)
    expected = torch.zeros(2, 12)
    for row, starts in enumerate(([3, 0], [1, 2])):
        for b, start in enumerate(starts):
            expected[row, start * 3:(start + 1) * 3] = values[row, b * 3:(b + 1) * 3]
    assert torch.equal(payload.to_dense(), expected)
    assert torch.equal(concat([take(payload, slice(1, 2)), take(payload, slice(0, 1))]).to_dense(), expected.flip(0))
