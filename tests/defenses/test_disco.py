"""DISCO: per-input channel pruning, its bytes, its gradient routing and its min-max against the proxy."""
import math

import pytest
import torch
from torch.nn import functional as F

from bench.run.engine import SplitModel, SplitTrainer
from defenses import build_defense
from defenses.disco import TEMPERATURE, PrunedPayload, channel_gates
from defenses.payload import SparsePayload, cross_to_server, detach, nbytes, wire_tensors
from victims import VICTIMS

CUT, IMAGE = (8, 12, 12), (1, 28, 28)
SMALL_PROXY = {"proxy_width": 8, "proxy_blocks": 0}


def disco(cut=CUT, input_shape=IMAGE, **knobs):
    return build_defense("disco", cut_shape=cut, seed=0, input_shape=input_shape, **{"cr": 8.0, **SMALL_PROXY, **knobs})


@pytest.mark.parametrize("cr,kept", [(8, 1), (4, 2), (3, 2), (2, 4), (1, 8), (16, 1)])
def test_exactly_the_stated_channels_are_sent_and_the_choice_follows_the_input(cr, kept):
    torch.manual_seed(0)
    defense = disco(cr=cr)
    assert defense.kept_channels == kept == max(1, math.floor(8 / cr))
    # nonzero everywhere (a zero channel in the map was pruned), channel energies varying per input
    z = torch.rand(64, *CUT) * torch.exp(2 * torch.randn(64, 8, 1, 1)) + 0.1
    with torch.no_grad():
        payload = defense.encode(z)
        sent = defense.decode(payload).flatten(2).ne(0).any(-1)  # (B, C): channels on the wire
        scores = defense.client_side.pruner(z)
    assert (sent.sum(1) == kept).all()
    assert torch.equal(sent, torch.zeros_like(sent).scatter(1, scores.topk(kept, dim=1).indices, True))
    if kept < 8:
        assert len({tuple(row.tolist()) for row in sent}) > 1, "every input kept the same channels"


def test_kept_channels_carry_the_map_times_its_gate_at_their_own_positions():
    torch.manual_seed(0)
    defense = disco(cr=4)
    z = torch.randn(5, *CUT)
    with torch.no_grad():
        dense = defense.decode(defense.encode(z))
        scores = defense.client_side.pruner(z)
    for b in range(5):
        ranked = sorted(range(8), key=lambda c: -scores[b, c].item())
        threshold = (scores[b, ranked[1]] + scores[b, ranked[2]]) / 2
        for c in range(8):
            expected = z[b, c] * torch.sigmoid((scores[b, c] - threshold) / TEMPERATURE) if c in ranked[:2] else 0 * z[b, c]
            assert torch.allclose(dense[b, c], expected, atol=1e-6)


def test_gates_pass_one_half_exactly_on_the_kept_channels():
    scores = torch.randn(50, 8)
    for kept in range(1, 9):
        gates = channel_gates(scores, kept)
        top = torch.zeros_like(gates, dtype=torch.bool).scatter(1, scores.topk(kept, dim=1).indices, True)
        if kept < 8:
            assert torch.equal(gates > 0.5, top)
        else:
            assert (gates >= 0.5).all()


@pytest.mark.parametrize("cr,kept", [(8, 1), (4, 2)])
def test_bytes_are_the_kept_channels_values_and_one_byte_index_each(cr, kept):
    defense = disco(cr=cr)
    payload = defense.encode(torch.randn(3, *CUT))
    values, channels = wire_tensors(payload)
    assert values.dtype == torch.float32 and channels.dtype == torch.uint8 and channels.shape == (3, kept)
    claimed = 4 * kept * 144 + kept
    assert nbytes(wire_tensors(payload)) == 3 * claimed
    described = defense.describe()
    assert described["payload_bytes"] == claimed
    assert described["realized_cr"] == pytest.approx(4 * 1152 / claimed)
    torch.manual_seed(0)
    model = SplitModel(victim=VICTIMS.get("mnistnet")(), cut="split-2", num_classes=10, input_shape=IMAGE,
                       defense=defense, protocol="ushaped", heads="sch", clients=1)
    trainer = SplitTrainer(model=model, lr=1e-3)
    trainer.step(0, torch.rand(4, *IMAGE), torch.randint(0, 10, (4,)))
    assert trainer.channel.per_sample("cut", "up") == claimed


def test_a_vector_cut_keeps_features():
    defense = disco(cut=(256,), input_shape=(561,), cr=8)
    payload = defense.encode(torch.rand(4, 256) + 0.1)
    assert (defense.decode(payload).ne(0).sum(1) == 32).all()
    assert defense.client_loss(payload, None, inputs=torch.randn(4, 561)).shape == ()


def test_the_adversarial_term_reaches_the_pruner_and_never_the_head():
    torch.manual_seed(0)
    defense = disco(cr=4)
    z = torch.randn(6, *CUT, requires_grad=True)
    payload = defense.encode(z)
    defense.client_loss(payload, None, inputs=torch.rand(6, *IMAGE)).backward(retain_graph=True)
    assert z.grad is None or not z.grad.any()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in defense.client_side.pruner.parameters())
    # the task gradient (through the sent values) does reach the head, on the kept channels only
    payload.values.sum().backward()
    sent = defense.decode(payload).detach().flatten(2).ne(0).any(-1)
    assert torch.equal(z.grad.flatten(2).ne(0).any(-1), sent)


def test_client_term_is_minus_alpha_over_one_minus_alpha_times_the_proxy_mse():
    torch.manual_seed(0)
    defense = disco(disco_alpha=0.75)
    x = torch.rand(4, *IMAGE)
    payload = defense.encode(torch.randn(4, *CUT))
    term = defense.client_loss(payload, None, inputs=x)
    reference = F.mse_loss(defense.client_side.proxy(defense.decode(payload)), x)
    assert torch.allclose(term, -3.0 * reference)
    assert torch.allclose(defense.proxy_loss(detach(payload), x), reference)
    assert disco(disco_alpha=0.0).client_loss(payload, None, inputs=x) == 0


def test_only_the_clients_own_payload_carries_the_pruner_view():
    payload = disco().encode(torch.randn(2, *CUT))
    assert isinstance(payload, PrunedPayload) and payload.pruner_view is not None
    for copy in (cross_to_server(payload), detach(payload)):
        assert type(copy) is SparsePayload
    with torch.no_grad():
        assert disco().encode(torch.randn(2, *CUT)).pruner_view is None


def test_proxy_is_the_clients_and_outside_its_optimizer():
    defense = disco()
    proxy = {id(p) for p in defense.proxy_parameters()}
    client = {id(p) for p in defense.client_parameters()}
    assert proxy and not proxy & client
    assert {id(p) for p in defense.client_side.pruner.parameters()} <= client
    half = defense.server_half()
    assert half.proxy_parameters() == [] and half.client_parameters() == []


def test_pruner_learns_to_drop_the_channel_that_gives_the_input_away():
    """A synthetic cut: channel 0 is the input itself, channels 1-7 noise; no task. Started with
    channel 0 on top, the min-max must teach the pruner to drop it (α = 0 leaves the pruner alone)."""

    def kept_rate_of_channel_0(alpha: float) -> tuple[float, float]:
        torch.manual_seed(0)
        defense = disco(input_shape=(1, 12, 12), disco_alpha=alpha)
        with torch.no_grad():
            head = defense.client_side.pruner.net[-1]
            head.bias.zero_()
            head.bias[0] = 0.3
        generator = torch.Generator().manual_seed(0)

        def batch():
            x = torch.rand(32, 1, 12, 12, generator=generator)
            return x, torch.cat([x, torch.rand(32, 7, 12, 12, generator=generator)], 1)

        def rate() -> float:
            with torch.no_grad():
                return (defense.client_side.pruner(batch()[1]).argmax(1) == 0).float().mean().item()

        client = torch.optim.Adam(defense.client_parameters(), lr=1e-3)
        proxy = torch.optim.Adam(defense.proxy_parameters(), lr=1e-3)
        before = rate()
        for _ in range(50):  # the engine's order: the client's step, then the proxy's on the detached payload
            x, z = batch()
            payload = defense.encode(z)
            client.zero_grad()
            loss = defense.client_loss(payload, None, inputs=x)
            if loss.requires_grad:
                loss.backward()
                client.step()
            proxy.zero_grad()
            defense.proxy_loss(detach(payload), x).backward()
            proxy.step()
        return before, rate()

    before, untouched = kept_rate_of_channel_0(0.0)
    assert before > 0.5 and untouched > 0.5
    _, adversarial = kept_rate_of_channel_0(0.5)
    assert adversarial < 0.1, adversarial


@pytest.mark.parametrize("cr", [8, 4])
@pytest.mark.parametrize("client_usage", ["one channel", "mixed"])
def test_an_attackers_copy_takes_the_clients_channel_usage_from_the_observed_indices(cr, client_usage):
    """A trained client that keeps channel 7 for every input (as on MNIST), or a mix of channels; a
    fresh copy with its own random pruner keeps others until aligned on the payload's indices alone."""
    torch.manual_seed(1)
    client, copy = disco(cr=cr), disco(cr=cr)
    with torch.no_grad():
        if client_usage == "one channel":
            client.client_side.pruner.net[-1].bias[7] += 100.0
        else:
            client.client_side.pruner.net[-1].bias.copy_(torch.linspace(-0.4, 0.4, 8))
    z_client, z_copy = torch.rand(256, *CUT), torch.rand(256, *CUT)  # the copy simulates its own inputs
    with torch.no_grad():
        target = client.channel_usage(cross_to_server(client.encode(z_client)))
        before = copy.channel_usage(copy.encode(z_copy))
    assert target.sum() == pytest.approx(copy.kept_channels) and (before - target).abs().max() > 0.1
    weights = [p.clone() for p in copy.parameters()]
    copy.align_to_observed(cross_to_server(client.encode(z_client)), lambda: copy.encode(z_copy))
    with torch.no_grad():
        after = copy.channel_usage(copy.encode(z_copy))
    assert (after - target).abs().max() <= 0.04
    changed = [not torch.equal(a, b) for a, b in zip(weights, copy.parameters())]
    assert sum(changed) == 1 and copy.client_side.pruner.net[-1].bias is list(copy.parameters())[changed.index(True)]


def test_refuses_settings_it_cannot_realise():
    from defenses.base import DefenseConfigError

    with pytest.raises(DefenseConfigError, match="< 1"):
        disco(disco_alpha=1.0)
    with pytest.raises(DefenseConfigError, match="compression"):
        disco(cr=0.5)
    with pytest.raises(DefenseConfigError, match="token"):
        defense = disco(cut=(16,), input_shape=(8,))
        defense.client_loss(defense.encode(torch.randn(8, 16)), None, inputs=torch.zeros(2, 8, dtype=torch.long))
