import pytest
import torch

from bench.run.engine import SplitModel, SplitTrainer, accuracy
from defenses import build_defense
from victims import VICTIMS


def make_model(defense="raw", protocol="ushaped", heads="sch", clients=1, **params):
    torch.manual_seed(0)
    victim = VICTIMS.get("mnistnet")()
    return SplitModel(
        victim=victim, cut="split-2", num_classes=10, input_shape=(1, 28, 28),
        defense=build_defense(defense, cut_shape=(8, 12, 12), seed=0, **params),
        protocol=protocol, heads=heads, clients=clients,
    )


def batch(n=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, 1, 28, 28, generator=g), torch.randint(0, 10, (n,), generator=g)


class Recorder:
    def __init__(self):
        self.views = []

    def on_step(self, view):
        self.views.append(view)


@pytest.mark.parametrize("cr", [8, 16, 32])
def test_bytes_ratio_raw_to_lightsplit_equals_cr(cr):
    x, y = batch()
    raw = SplitTrainer(model=make_model(), lr=1e-3)
    ls = SplitTrainer(model=make_model("lightsplit-f", cr=cr), lr=1e-3)
    raw.step(0, x, y)
    ls.step(0, x, y)
    for direction in ("up", "down"):
        assert raw.channel.per_sample("cut", direction) / ls.channel.per_sample("cut", direction) == cr


def test_split_step_matches_monolithic_gradients():
    """Crossing the cut by hand must give the same gradients as backprop through the whole model."""
    x, y = batch()
    model = make_model("lightsplit-f", cr=8)
    reference = make_model("lightsplit-f", cr=8)
    reference.load_state_dict(model.state_dict())
    trainer = SplitTrainer(model=model, lr=1e-3, lambda_wcc=0.0)
    # capture grads before the optimizer steps by zero learning rate
    for opt in trainer.client_optimizers + [trainer.server_optimizer]:
        for group in opt.param_groups:
            group["lr"] = 0.0
    trainer.step(0, x, y)
    reference.train()
    torch.nn.functional.cross_entropy(reference(x), y).backward()
    for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
        assert torch.allclose(p.grad, q.grad, atol=1e-6), name


def test_observer_sees_payload_and_gradient_but_labels_only_in_vanilla():
    x, y = batch()
    for protocol in ("ushaped", "vanilla"):
        recorder = Recorder()
        trainer = SplitTrainer(model=make_model("lightsplit-f", protocol=protocol, cr=8), lr=1e-3, observers=[recorder])
        trainer.step(0, x, y)
        view = recorder.views[0]
        assert view.payload.shape == (32, 144) and view.grad.shape == (32, 144)
        assert not view.payload.requires_grad
        assert (view.labels is None) == (protocol == "ushaped")


def test_vanilla_sends_labels_up_and_has_no_tail_link():
    x, y = batch()
    trainer = SplitTrainer(model=make_model(protocol="vanilla"), lr=1e-3)
    trainer.step(0, x, y)
    assert trainer.channel.per_sample("cut", "up") == 4608 + 8  # payload + int64 label
    assert trainer.channel.per_sample("tail", "down") == 0


def test_per_client_heads_are_distinct_and_shared_head_is_one():
    pch = make_model(heads="pch", clients=3)
    sch = make_model(heads="sch", clients=3)
    assert len(pch.heads) == 3 and len(pch.tails) == 3 and len(sch.heads) == 1
    assert not torch.equal(pch.heads[0][0].weight, pch.heads[1][0].weight)
    trainer = SplitTrainer(model=pch, lr=1e-2)
    before = [h[0].weight.clone() for h in pch.heads]
    x, y = batch()
    trainer.step(1, x, y)
    after = [h[0].weight for h in pch.heads]
    assert torch.equal(before[0], after[0]) and not torch.equal(before[1], after[1])


def test_wcc_changes_the_head_update_only_when_weighted():
    x, y = batch()
    heads = []
    for lam in (0.0, 0.0, 10.0):
        model = make_model("lightsplit-f", cr=8)
        SplitTrainer(model=model, lr=1e-2, lambda_wcc=lam).step(0, x, y)
        heads.append(model.heads[0][0].weight.detach().clone())
    assert torch.equal(heads[0], heads[1]) and not torch.equal(heads[0], heads[2])


def test_training_learns_and_accuracy_is_deterministic():
    x, y = batch(256)
    y = y % 2
    x[:, :, :14] += 0.5 * y.view(-1, 1, 1, 1)  # class 1 has a bright top half: learnable
    results = []
    for _ in range(2):
        model = make_model("lightsplit-f", cr=8)
        trainer = SplitTrainer(model=model, lr=1e-2)
        for _ in range(3):
            trainer.train_epoch([[(x[i:i + 32], y[i:i + 32]) for i in range(0, 256, 32)]])
        results.append((accuracy(model, x, y), [p.detach().clone() for p in model.parameters()]))
    assert results[0][0] == results[1][0] and results[0][0] > 0.8
    assert all(torch.equal(a, b) for a, b in zip(results[0][1], results[1][1]))


def _proxy_defense():
    """A raw payload whose client holds a proxy inversion decoder; the client's own loss pulls 1,000
    times harder against the proxy than the proxy's loss pulls for it (an adversarial term)."""
    from defenses.raw import RawDefense

    class ProxyRaw(RawDefense):
        def __init__(self):
            super().__init__(cut_shape=(8, 12, 12))
            self.client_side.proxy = torch.nn.Linear(8 * 12 * 12, 28 * 28)

        def proxy_loss(self, payload, inputs):
            return torch.nn.functional.mse_loss(self.client_side.proxy(payload), inputs.flatten(1))

        def client_loss(self, payload, y, *, inputs):
            self.seen_inputs = inputs
            return -1e3 * self.proxy_loss(payload.detach(), inputs)

    return ProxyRaw()


def test_proxy_adversary_trains_on_its_own_loss_only_and_client_loss_sees_the_inputs():
    torch.manual_seed(0)
    defense = _proxy_defense()
    model = SplitModel(victim=VICTIMS.get("mnistnet")(), cut="split-2", num_classes=10, input_shape=(1, 28, 28),
                       defense=defense, protocol="ushaped", heads="sch", clients=1)
    trainer = SplitTrainer(model=model, lr=1e-3)
    proxy = {id(p) for p in defense.proxy_parameters()}
    assert len(proxy) == 2 and not proxy & {id(p) for p in defense.client_parameters()}
    assert trainer.defense_client_optimizer is None  # the proxy is the client half's only parameter
    x, y = batch()
    with torch.no_grad():
        before = defense.proxy_loss(defense.encode(model.heads[0](x)), x).item()
    for _ in range(20):
        trainer.step(0, x, y)
    assert defense.seen_inputs is x
    with torch.no_grad():
        after = defense.proxy_loss(defense.encode(model.heads[0](x)), x).item()
    assert after < 0.9 * before, (before, after)
