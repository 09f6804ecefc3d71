"""FSHA: the hijacked gradient reaches the client only through the active hook, end-to-end cells,
the divergence criterion and the capability check."""
import copy
import dataclasses
import math

import pytest
import torch

from attacks import Capability, MissingCapabilityError
from attacks.fsha import FSHA, fsha_diverged
from attacks.fsha_config import CONFIGS, FSHAConfig
from attacks.view import StepView
from bench.data.splits import partition
from bench.profiles import get_profile
from bench.run.attack_cell import run_attack_cell
from bench.run.attacker_views import build_view
from bench.run.cell import Cell
from bench.run.engine import SplitTrainer
from bench.run.training import build_model, seed_everything
from defenses.payload import values_of, with_values

PROFILE = get_profile("smoke")
DEFENSES = [("raw", {}), ("lightsplit-f", {"cr": 8.0}), ("topk", {"cr": 8.0}), ("learned-1x1", {"cr": 8.0})]


def _cell(defense="raw", **params):
    return Cell(dataset="digits", victim="mnistnet", cut="split-2", defense=defense, profile="smoke", seed=0,
                attack="fsha", defense_knobs=params)


def _fresh(cell, data):
    seed_everything(cell.seed)
    return build_model(cell, data)


def _pre_view(cell, data, model, granted=FSHA.requires):
    indices = partition(data.members.y, clients=1, scheme="iid", alpha=None, seed=cell.seed)
    view, _ = build_view(cell=cell, model=model, data=data, client_indices=indices, granted=granted,
                         n_targets=PROFILE.targets, with_targets=False)
    return view


def _params(model):
    return {name: p.detach().clone() for name, p in model.named_parameters()}


@pytest.mark.parametrize("defense,params", DEFENSES)
def test_hijacked_gradient_replaces_the_honest_one_at_the_cut(digits, defense, params):
    cell = _cell(defense, **params)
    honest, hijacked = _fresh(cell, digits), _fresh(cell, digits)
    attack = FSHA(view=_pre_view(cell, digits, hijacked), profile="smoke", seed=0)
    critic_before = copy.deepcopy(attack.critic)
    seen = {}

    class Spy:
        def client_gradient(self, view):
            seen["view"], seen["grad"] = view, attack.client_gradient(view)
            return seen["grad"]

    x, y = digits.members.x[:32], digits.members.y[:32]
    rng = torch.random.get_rng_state()
    SplitTrainer(model=hijacked, lr=PROFILE.lr, active=Spy()).step(0, x, y)
    torch.random.set_rng_state(rng)
    SplitTrainer(model=honest, lr=PROFILE.lr).step(0, x, y)
    before, after_honest, after_hijacked = _params(_fresh(cell, digits)), _params(honest), _params(hijacked)
    client = [n for n in before if n.startswith("heads.") or n.startswith("defense.client_side.")]
    server = [n for n in before if n not in client]
    assert client and server
    # the client path moved, differently from the honest step; the server and the tail took the honest step
    assert any(not torch.equal(after_honest[n], after_hijacked[n]) for n in client)
    assert any(not torch.equal(before[n], after_hijacked[n]) for n in client if n.startswith("heads."))
    for n in server:
        assert torch.equal(after_honest[n], after_hijacked[n]), n
    # what the client received: the gradient of the (pre-step) critic's mean score, not the task's
    view, grad = seen["view"], seen["grad"]
    values = values_of(view.payload).clone().requires_grad_(True)
    score = critic_before(attack.cut_map(with_values(view.payload, values))).mean()
    expected = torch.autograd.grad(score, values)[0]
    assert grad.shape == view.grad.shape and torch.allclose(grad, expected, atol=1e-7)
    assert not torch.allclose(grad, view.grad)
    assert len(attack.history) == 1 and all(math.isfinite(v) for v in attack.history[0].values())


def test_without_the_hook_training_is_bit_identical_to_honest(digits):
    cell = _cell()
    batches = [(digits.members.x[i : i + 32], digits.members.y[i : i + 32]) for i in (0, 32)]
    plain = _fresh(cell, digits)
    trainer = SplitTrainer(model=plain, lr=PROFILE.lr)
    for x, y in batches:
        trainer.step(0, x, y)
    watched = _fresh(cell, digits)
    rng = torch.random.get_rng_state()
    attack = FSHA(view=_pre_view(cell, digits, watched), profile="smoke", seed=0)
    assert torch.equal(rng, torch.random.get_rng_state())  # building the attack draws nothing globally
    trainer = SplitTrainer(model=watched, lr=PROFILE.lr, active=None)
    for x, y in batches:
        trainer.step(0, x, y)
    for (name, a), b in zip(plain.state_dict().items(), watched.state_dict().values()):
        assert torch.equal(a, b), name
    # nor does the hook itself, and the same seed gives the same gradient
    payload = plain.defense.encode(plain.heads[0](batches[0][0])).detach()
    view = StepView(0, 0, 0, payload, torch.zeros_like(payload), None)
    twin = FSHA(view=_pre_view(cell, digits, watched), profile="smoke", seed=0)
    rng = torch.random.get_rng_state()
    assert torch.equal(attack.client_gradient(view), twin.client_gradient(view))
    assert torch.equal(rng, torch.random.get_rng_state()) and attack.history == twin.history


@pytest.mark.parametrize("defense,params", DEFENSES[:2])
def test_end_to_end_cell_scores_reconstructions(tmp_path, digits, defense, params):
    cell = _cell(defense, **params)
    metrics, _ = run_attack_cell(cell, data=digits, profile=PROFILE, cache_dir=tmp_path / "ck", artifacts_dir=tmp_path)
    steps = math.ceil(len(digits.members) / PROFILE.batch_size)
    assert metrics["fsha_iterations"] == CONFIGS["smoke"].epochs * steps
    assert metrics["attack_targets"] == PROFILE.targets
    for key in ("ssim", "masked_mse", "accuracy", "fsha_ae_mse", "fsha_critic_loss", "fsha_wasserstein"):
        assert metrics[key] is not None and math.isfinite(metrics[key]), key
    assert metrics["diverged"] in (0.0, 1.0)
    assert (tmp_path / f"{cell.id}.png").exists() and not (tmp_path / "ck").exists()


def _history(n=50, ae=lambda i: 0.5 / (1 + i), w=lambda i: 0.5, scale=10.0):
    return [{"ae_mse": ae(i), "critic_loss": -w(i), "wasserstein": w(i), "gp": 0.01, "scale": scale} for i in range(n)]


def test_divergence_criterion():
    assert not fsha_diverged(_history())
    assert not fsha_diverged([]) and not fsha_diverged(_history(n=1))
    nan = _history()
    nan[20]["critic_loss"] = float("nan")
    assert fsha_diverged(nan)
    assert fsha_diverged(_history(n=1, ae=lambda i: float("inf")))
    assert fsha_diverged(_history(w=lambda i: 0.5 * 1.3**i))  # the Wasserstein estimate explodes
    assert fsha_diverged(_history(ae=lambda i: 0.5))  # the autoencoder does not learn
    with pytest.raises(ValueError):
        fsha_diverged(_history(), window=0.0)


def test_forced_collapse_is_detected(digits):
    # No gradient penalty and a huge critic learning rate: the critic's estimate runs away.
    cell = _cell()
    model = _fresh(cell, digits)
    view = _pre_view(cell, digits, model)
    runaway = dataclasses.replace(CONFIGS["smoke"], gp_weight=0.0, lr_critic=1.0)
    attacks = {
        "healthy": FSHA(view=view, profile="smoke"),
        "collapsed": FSHA(view=view, profile="smoke", config=runaway),
    }
    with torch.no_grad():
        payloads = [model.defense.encode(model.heads[0](digits.members.x[i : i + 64])) for i in range(0, 256, 64)]
    for attack in attacks.values():
        for step in range(40):
            payload = payloads[step % len(payloads)]
            attack.client_gradient(StepView(step, 0, 0, payload, torch.zeros_like(payload), None))
    assert not fsha_diverged(attacks["healthy"].history)
    assert fsha_diverged(attacks["collapsed"].history)


def test_needs_aux_data(digits):
    cell = _cell()
    view = _pre_view(cell, digits, _fresh(cell, digits), granted=frozenset({Capability.DEFENSE_PUBLIC_STATE}))
    with pytest.raises(MissingCapabilityError, match="aux_data"):
        FSHA(view=view, profile="smoke")


def test_budgets_and_the_hijacked_client_lr(digits):
    assert CONFIGS["paper"].lr_autoencoder == CONFIGS["paper"].lr_critic == 1e-4
    assert all(b.gp_weight == 500 for b in CONFIGS.values())
    assert CONFIGS["paper"].client_lr == CONFIGS["smoke"].client_lr == 1e-4  # App. B-C5
    assert CONFIGS["cpu"].client_lr == 1e-3  # the stated cpu deviation: 1e-4 collapses in 1,504 steps
    with pytest.raises(ValueError):
        FSHAConfig(epochs=0, lr_autoencoder=1e-4, lr_critic=1e-4)
    with pytest.raises(ValueError):
        FSHAConfig(epochs=1, lr_autoencoder=0.0, lr_critic=1e-4)
    cell = _cell("learned-1x1", cr=8.0)
    model = _fresh(cell, digits)
    attack = FSHA(view=_pre_view(cell, digits, model), profile="smoke", seed=0)
    trainer = SplitTrainer(model=model, lr=PROFILE.lr, client_lr=attack.hijacked_client_lr, active=attack)
    client_lrs = {g["lr"] for opt in trainer._client_optimizers(0) for g in opt.param_groups}
    assert client_lrs == {1e-4} and trainer.server_optimizer.param_groups[0]["lr"] == PROFILE.lr


@pytest.mark.parametrize("defense,params", DEFENSES)
def test_the_decoder_and_critic_read_cut_maps_of_every_defense(digits, defense, params):
    cell = _cell(defense, **params)
    model = _fresh(cell, digits)
    attack = FSHA(view=_pre_view(cell, digits, model), profile="smoke", seed=0)
    x = digits.members.x[:4] * 2 - 1
    cut = tuple(attack.view.cut_shape)
    assert tuple(attack.pilot_map(x).shape) == (4, *cut)
    assert tuple(attack.decoder(attack.pilot_map(x)).shape) == (4, *x.shape[1:])
    assert attack.critic(attack.pilot_map(x)).shape == (4, 1)


def test_a_client_hijacked_onto_the_pilot_is_decoded_beating_the_mean_image(digits):
    # The easy case: a client the hijack moved onto the pilot sends f̃(x). After 300 attacker
    # iterations, run() decodes such payloads of the targets; its MSE must be under 0.8× that of the
    # mean aux image (the margin of the other attacks' quality tests). Seen: 0.50× at seed 0; an FSHA
    # returning the mean image scores 1.0×. The whole hijack at smoke scale is too seed-dependent to
    # test: 0.77×, 2.7× and 4.5× the floor over seeds 0–2 at 320 iterations; the cpu profile's raw
    # cell reaches SSIM 0.54 against the prior's 0.12.
    cell = _cell()
    model = _fresh(cell, digits)
    attack = FSHA(view=_pre_view(cell, digits, model), profile="smoke")
    with torch.no_grad():
        payloads = [model.defense.encode(model.heads[0](digits.members.x[i : i + 64])) for i in range(0, 256, 64)]
    for step in range(300):
        payload = payloads[step % len(payloads)]
        attack.client_gradient(StepView(step, 0, 0, payload, torch.zeros_like(payload), None))
    indices = partition(digits.members.y, clients=1, scheme="iid", alpha=None, seed=cell.seed)
    view, truth = build_view(cell=cell, model=model, data=digits, client_indices=indices, granted=FSHA.requires,
                             n_targets=PROFILE.targets)
    attack.pilot.eval()
    with torch.no_grad():
        onto_pilot = attack.defense.attacker_encode(attack.pilot(truth.x * 2 - 1))
    attack.update_view(dataclasses.replace(view, targets=dataclasses.replace(view.targets, payloads=onto_pilot)))
    out = attack.run()
    floor = float(((view.aux.inputs.mean(0, keepdim=True) - truth.x) ** 2).mean())
    mse = float(((out.reconstructions - truth.x) ** 2).mean())
    assert mse < 0.8 * floor, (mse, floor)
