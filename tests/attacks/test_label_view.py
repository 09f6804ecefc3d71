"""The server's real view in U-shaped SL: the gradient the client's tail returns, per step and per sample;
refused in vanilla SL, where the tail and the labels are the server's."""
import copy

import pytest
import torch
from torch.nn import functional as F

from attacks import Capability, MissingCapabilityError
from bench.profiles import get_profile
from bench.run.attack_cell import run_attack_cell
from bench.run.attacker_views import build_view, observe_payloads, observe_tail_gradients
from bench.run.cell import Cell
from bench.run.engine import SplitTrainer
from bench.run.training import build_model, train_victim

PROFILE = get_profile("smoke")
TAIL = frozenset({Capability.TAIL_GRADIENTS, Capability.AUX_DATA, Capability.AUX_QUERIES})


def make_cell(protocol="ushaped", attack="none", defense="raw", **knobs):
    return Cell(dataset="digits", victim="mnistnet", cut="split-2", defense=defense, defense_knobs=knobs,
                profile="smoke", seed=0, protocol=protocol, attack=attack)


class _Keep:
    def __init__(self):
        self.views = []

    def on_step(self, view):
        self.views.append(view)


def test_the_step_view_carries_the_gradient_the_tail_returned(digits):
    """Replayed on a copy of the model before the step: d(batch-mean loss)/d(features sent down)."""
    torch.manual_seed(0)
    model = build_model(make_cell(), digits)
    before = copy.deepcopy(model).train()
    keep = _Keep()
    x, y = digits.members.x[:16], digits.members.y[:16]
    SplitTrainer(model=model, lr=1e-3, observers=[keep]).step(0, x, y)
    features = before.backbone(before.defense.decode(before.defense.encode(before.head_of(0)(x)))).detach()
    features.requires_grad_(True)
    expected, = torch.autograd.grad(F.cross_entropy(before.tail_of(0)(features), y), features)
    got = keep.views[0].tail_grad
    assert got is not None and got.shape == features.shape
    torch.testing.assert_close(got, expected)
    assert not got.requires_grad


def test_vanilla_steps_carry_no_tail_gradient_and_views_refuse_it_in_one_line(digits):
    cell = make_cell("vanilla")
    keep = _Keep()
    victim = train_victim(cell, data=digits, profile=PROFILE, observers=[keep])
    assert keep.views and all(v.tail_grad is None and v.labels is not None for v in keep.views)
    with pytest.raises(MissingCapabilityError, match="vanilla") as err:
        build_view(cell=cell, model=victim.model, data=digits, client_indices=victim.client_indices, granted=TAIL,
                   n_targets=16)
    assert "\n" not in str(err.value)
    # without the capability the vanilla view builds as before
    build_view(cell=cell, model=victim.model, data=digits, client_indices=victim.client_indices,
               granted=frozenset({Capability.AUX_DATA}), n_targets=16)


@pytest.mark.parametrize("attack", ["label-norm", "label-direction", "model-completion"])
def test_label_attacks_are_refused_on_vanilla_cells_before_any_victim_trains(digits, tmp_path, attack):
    with pytest.raises(MissingCapabilityError, match=f"{attack}: label attacks need U-shaped split learning") as err:
        run_attack_cell(make_cell("vanilla", attack), data=digits, profile=PROFILE, cache_dir=tmp_path,
                        artifacts_dir=None)
    assert "\n" not in str(err.value)
    assert not any(tmp_path.iterdir())  # refused up front: no victim was trained and cached


def test_per_sample_tail_gradients_are_each_samples_own(digits):
    victim = train_victim(make_cell(), data=digits, profile=PROFILE)
    model = victim.model
    x, y = digits.members.x[:12], digits.members.y[:12]
    grads_before = [None if p.grad is None else p.grad.clone() for p in model.parameters()]
    payloads = observe_payloads(model, x)
    batched = observe_tail_gradients(model, payloads, y, batch_size=5)  # batches do not mix samples
    one_by_one = torch.cat([observe_tail_gradients(model, observe_payloads(model, x[i:i + 1]), y[i:i + 1])
                            for i in range(len(y))])
    torch.testing.assert_close(batched, one_by_one)
    for p, g in zip(model.parameters(), grads_before, strict=True):  # no parameter's gradient was touched
        assert (p.grad is None) == (g is None) and (g is None or torch.equal(p.grad, g))


def test_the_view_holds_tail_gradients_only_where_granted(digits):
    cell = make_cell()
    victim = train_victim(cell, data=digits, profile=PROFILE)
    kwargs = dict(cell=cell, model=victim.model, data=digits, client_indices=victim.client_indices, n_targets=16)
    plain, _ = build_view(granted=frozenset({Capability.AUX_DATA, Capability.AUX_QUERIES}), **kwargs)
    assert plain.targets.tail_grads is None and plain.aux.tail_grads is None
    targets_only, _ = build_view(granted=frozenset({Capability.TAIL_GRADIENTS, Capability.AUX_DATA}), **kwargs)
    assert targets_only.targets.tail_grads.shape == (16, 84) and targets_only.aux.tail_grads is None
    full, truth = build_view(granted=TAIL, **kwargs)
    assert full.aux.tail_grads.shape == (len(digits.nonmembers.y), 84)
    expected = observe_tail_gradients(victim.model, full.targets.payloads, truth.y)
    torch.testing.assert_close(full.targets.tail_grads, expected)
