"""The attacker's view holds only what the server legitimately sees."""
import dataclasses

import pytest
import torch
from torch import nn

from attacks import ATTACKS, Capability, MissingCapabilityError
from bench.profiles import get_profile
from bench.run.attacker_views import build_view
from bench.run.cell import Cell
from bench.run.training import train_victim


@pytest.fixture(scope="module")
def trained(digits):
    data = digits
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="learned-1x1", defense_knobs={"cr": 8.0},
                profile="smoke", seed=0)
    return cell, data, train_victim(cell, data=data, profile=get_profile("smoke"))


def reachable_tensors(obj, seen=None):
    """Every tensor reachable from obj through fields, containers, modules and closures."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, nn.Module):
        yield from obj.parameters()
        yield from obj.buffers()
        for value in vars(obj).values():
            if not isinstance(value, (dict, nn.Module)):
                yield from reachable_tensors(value, seen)
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield from reachable_tensors(getattr(obj, f.name), seen)
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from reachable_tensors(value, seen)
    elif isinstance(obj, (list, tuple, frozenset, set)):
        for value in obj:
            yield from reachable_tensors(value, seen)
    elif callable(obj) and getattr(obj, "__closure__", None):
        for cell in obj.__closure__:
            yield from reachable_tensors(cell.cell_contents, seen)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        for value in vars(obj).values():
            yield from reachable_tensors(value, seen)


ALL_BUT_WHITEBOX = frozenset(Capability) - {Capability.MEMBER_INPUTS}


def test_view_reaches_no_client_weights_and_no_private_inputs(trained):
    cell, data, victim = trained
    view, truth = build_view(cell=cell, model=victim.model, data=data, client_indices=victim.client_indices,
                             granted=ALL_BUT_WHITEBOX, n_targets=16)
    client_tensors = list(victim.model.heads.parameters()) + list(victim.model.tails.parameters())
    client_tensors += victim.model.defense.client_parameters()
    tensors = list(reachable_tensors(view))
    assert tensors, "the walk found nothing: the test would pass vacuously"
    walked = {id(t) for t in tensors}
    assert id(view.targets.tail_grads) in walked and id(view.aux.tail_grads) in walked  # the walk covers them
    pointers = {t.data_ptr() for t in tensors}
    for p in client_tensors:
        assert p.data_ptr() not in pointers
        assert not any(t.shape == p.shape and torch.equal(t, p.detach()) for t in tensors)
    members = data.members.x
    for t in tensors:
        if t.dim() == 4 and t.shape[1:] == members.shape[1:]:
            assert not any(torch.equal(row, m) for row in t[:64] for m in truth.x), "a target's input leaked"
    # the server copy of the defense has no client half (the learned 1×1 client conv is absent)
    assert view.server_defense.client_parameters() == []
    # the client architecture factory builds a fresh head, not the trained one
    fresh = view.client_factory()
    assert not torch.equal(fresh.head[0].weight, victim.model.heads[0][0].weight)


def test_member_inputs_appear_only_when_granted(trained):
    cell, data, victim = trained
    kwargs = dict(cell=cell, model=victim.model, data=data, client_indices=victim.client_indices, n_targets=16)
    view, _ = build_view(granted=frozenset(), **kwargs)
    assert view.members is None and view.aux is None and view.client_factory is None and view.public_state is None
    assert view.targets.inputs is None and view.targets.grads is None
    white_box, _ = build_view(granted=frozenset({Capability.MEMBER_INPUTS}), **kwargs)
    assert white_box.members.inputs is not None and white_box.targets.inputs is None


def test_missing_requirement_fails_at_construction_naming_it(trained):
    cell, data, victim = trained
    view, _ = build_view(cell=cell, model=victim.model, data=data, client_indices=victim.client_indices,
                         granted=frozenset(), n_targets=16)
    with pytest.raises(MissingCapabilityError, match="member_inputs"):
        ATTACKS.get("decoder-ref")(view=view, profile="smoke")
    with pytest.raises(MissingCapabilityError, match="aux_queries"):
        ATTACKS.get("decoder")(view=view, profile="smoke")


def _defenses_with_knobs():
    from defenses import DEFENSES
    from tests.defenses.knob_values import smoke_knobs

    names = DEFENSES.names() + ["lightsplit-f+dp", "learned-1x1+dp"]
    return [(name, smoke_knobs(name)) for name in names if not name.startswith(("broken", "random"))]


class _KeepEveryStep:
    def __init__(self):
        self.views = []

    def on_step(self, step_view):
        self.views.append(step_view)


def _assert_reaches_nothing_of_the_client(view, client_tensors, private_inputs):
    tensors = list(reachable_tensors(view))
    assert tensors, "the walk found nothing: the test would pass vacuously"
    pointers = {t.data_ptr() for t in tensors}
    for p in client_tensors:
        assert p.data_ptr() not in pointers
        if p.numel() > 1 and p.detach().std() > 0:  # a constant tensor (zeros, ones) could match by chance
            assert not any(t.shape == p.shape and torch.equal(t, p.detach()) for t in tensors)
    for t in tensors:
        if t.dim() == 4 and t.shape[1:] == private_inputs.shape[1:]:
            assert not any(torch.equal(row, m) for row in t[:64] for m in private_inputs[:256])


@pytest.mark.parametrize("defense,knobs", _defenses_with_knobs())
def test_no_view_an_attack_receives_reaches_the_client_under_any_defense(defense, knobs, digits):
    """Per-step views (co-training and active attacks), the view before training and the trained
    view hold no client-side parameter (head, tail, the defense's client half) and no member input."""
    data = digits
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense=defense, defense_knobs=knobs,
                profile="smoke", seed=0)
    keep = _KeepEveryStep()
    victim = train_victim(cell, data=data, profile=get_profile("smoke"), observers=[keep])
    model = victim.model
    client = [*model.heads.parameters(), *model.tails.parameters(), *model.defense.client_parameters(),
              *model.defense.proxy_parameters()]
    assert client, "no client tensors to look for"
    kwargs = dict(cell=cell, model=model, data=data, client_indices=victim.client_indices, granted=ALL_BUT_WHITEBOX,
                  n_targets=16)
    before, _ = build_view(with_targets=False, **kwargs)
    after, _ = build_view(**kwargs)
    # U-shaped: the per-step and trained views carry the tail's returned gradients, and the walk reaches them
    assert keep.views[-1].tail_grad is not None and after.targets.tail_grads is not None and after.aux.tail_grads is not None
    for view in (keep.views[0], keep.views[-1], before, after):
        _assert_reaches_nothing_of_the_client(view, client, data.members.x)
    # the per-step view runs the server's live half: its decode follows the trained server state
    live = keep.views[-1].server.defense
    assert live.client_parameters() == []
    z = torch.randn(3, *model.cut_shape)
    model.eval()
    with torch.no_grad():
        payload = model.defense.encode(z)
        assert torch.equal(live.eval().decode(payload), model.defense.decode(payload))


@pytest.mark.parametrize("defense,knobs", [("learned-1x1+dp", {"cr": 8.0, "sigma": 0.02}), ("lightsplit-l", {"cr": 8.0, "width": 32})])
def test_attackers_simulate_with_the_trained_server_half_and_clip_but_a_fresh_client_half(defense, knobs, digits):
    data = digits
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense=defense, defense_knobs=knobs,
                profile="smoke", seed=0)
    model = train_victim(cell, data=data, profile=get_profile("smoke")).model
    view, _ = build_view(cell=cell, model=model, data=data, client_indices=[torch.arange(len(data.members))],
                         granted=ALL_BUT_WHITEBOX, n_targets=8)
    path = view.client_factory()
    trained_server = [p for m in model.defense.modules() if hasattr(m, "server_side") for p in m.server_side.parameters()]
    copied_server = [p for m in path.defense.modules() if hasattr(m, "server_side") for p in m.server_side.parameters()]
    assert trained_server and all(torch.equal(a, b) for a, b in zip(trained_server, copied_server, strict=True))
    assert not any(p.requires_grad for p in copied_server)  # frozen: the server's, not the attacker's to fit
    trained_client, fresh_client = model.defense.client_parameters(), path.defense.client_parameters()
    assert not any(torch.equal(a, b) for a, b in zip(trained_client, fresh_client, strict=True))
    for trained_t, copied_t in zip(model.defense.client_side.modules(), path.defense.client_side.modules(), strict=True):
        if hasattr(trained_t, "clip_norm"):
            assert float(copied_t.clip_norm) == float(trained_t.clip_norm) > 0  # the fixed DP clip is public
