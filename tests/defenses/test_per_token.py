"""Per-token defenses on a (T, d) sequence cut: the projection acts along the model dimension only."""
import pytest
import torch

from defenses import build_defense
from defenses.payload import SparsePayload, nbytes, wire_tensors
from defenses.per_token import PerTokenDefense

T, D = 5, 32
CUT = (T, D)


def _z(batch=3, seed=0):
    return torch.randn(batch, *CUT, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("name", ["lightsplit-f", "lightsplit-l"])
def test_projection_is_orthonormal_along_the_model_dimension(name):
    defense = build_defense(name, cut_shape=CUT, seed=3, per_token=True, cr=8)
    R = defense.public_state()["R"]
    assert R.shape == (D, D // 8)
    torch.testing.assert_close(R.T @ R, torch.eye(D // 8), atol=1e-6, rtol=0)


def test_payload_is_each_tokens_projection_and_the_lift_back_is_R_times_it():
    defense = build_defense("lightsplit-f", cut_shape=CUT, seed=1, per_token=True, cr=4)
    R, z = defense.public_state()["R"], _z()
    payload = defense.encode(z)
    slow = torch.stack([torch.stack([z[b, t] @ R for t in range(T)]) for b in range(z.shape[0])])
    torch.testing.assert_close(payload, slow.reshape(-1, D // 4))
    decoded = defense.decode(payload)
    assert decoded.shape == z.shape
    torch.testing.assert_close(decoded, (slow @ R.T))
    # a token's payload depends on that token alone
    z2 = z.clone()
    z2[0, 2] += 1.0
    changed = (defense.encode(z2) - payload).abs().sum(1).reshape(z.shape[0], T) > 0
    assert changed.nonzero().tolist() == [[0, 2]]


def test_gradient_through_the_cut_is_R_times_the_payload_gradient():
    defense = build_defense("lightsplit-f", cut_shape=CUT, seed=2, per_token=True, cr=8)
    R = defense.public_state()["R"]
    z = _z().requires_grad_(True)
    payload = defense.encode(z)
    upstream = torch.randn_like(payload)
    payload.backward(upstream)
    torch.testing.assert_close(z.grad, (upstream @ R.T).reshape(z.shape))


@pytest.mark.parametrize("name,cr,per_token_bytes", [
    ("raw", None, 4 * D),
    ("lightsplit-f", 8, 4 * D // 8),
    ("lightsplit-l", 16, 4 * D // 16),
    ("learned-1x1", 8, 4 * D // 8),
    # top-K keeps floor(4k/6) values (float32) and their positions (int16) per token
    ("topk", 8, ((4 * (D // 8)) // 6) * 6),
])
def test_wire_bytes_per_sequence_are_tokens_times_bytes_per_token(name, cr, per_token_bytes):
    defense = build_defense(name, cut_shape=CUT, seed=0, per_token=True, **({"cr": cr} if cr else {}))
    payload = defense.encode(_z(batch=2))
    assert nbytes(wire_tensors(payload)) == 2 * T * per_token_bytes
    described = defense.describe()
    assert described["payload_bytes"] == T * per_token_bytes
    assert described["realized_cr"] == pytest.approx(4 * D / per_token_bytes)


def test_topk_keeps_the_largest_values_of_every_token():
    defense = build_defense("topk", cut_shape=CUT, seed=0, per_token=True, cr=4)
    z = _z(batch=2)
    payload = defense.encode(z)
    assert isinstance(payload, SparsePayload) and payload.indices.dtype == torch.int16
    dense = defense.decode(payload)
    kept = defense.inner.kept
    for b in range(2):
        for t in range(T):
            largest = z[b, t].abs().topk(kept).indices
            assert torch.equal(dense[b, t].nonzero().flatten().sort().values, largest.sort().values)


def test_learned_bottleneck_is_a_linear_map_per_token():
    defense = build_defense("learned-1x1", cut_shape=CUT, seed=0, per_token=True, cr=8)
    assert isinstance(defense, PerTokenDefense)
    assert [tuple(p.shape) for p in defense.client_parameters()] == [(D // 8, D), (D // 8,)]
    assert [tuple(p.shape) for p in defense.server_parameters()] == [(D, D // 8), (D,)]
    assert defense.decode(defense.encode(_z())).shape == (3, *CUT)


def test_the_server_half_keeps_the_lift_back_and_drops_the_client_half():
    defense = build_defense("learned-1x1", cut_shape=CUT, seed=0, per_token=True, cr=8)
    half = defense.server_half()
    assert half.client_parameters() == []
    assert [p is q for p, q in zip(half.server_parameters(), defense.server_parameters())] == [True, True]
