import dataclasses
import math

import pytest
import torch

import attacks.sdar  # noqa: F401  (registers "sdar")
from attacks import ATTACKS, Capability, MissingCapabilityError, ThreatModel
from attacks.payload_moments import PayloadMomentTie
from attacks.sdar import SDAR
from attacks.sdar_config import CONFIGS, SDARConfig
from attacks.sdar_nets import MapDiscriminator, SDARDecoder, frozen, upsampling
from bench.profiles import get_profile
from bench.run import training
from bench.run.attack_cell import run_attack_cell
from bench.run.attacker_views import build_view
from bench.run.cell import Cell
from bench.run.engine import SplitTrainer
from bench.run.training import build_model, initial_model, train_victim

PROFILE = get_profile("smoke")


def make_cell(defense="raw", protocol="ushaped", **params):
    return Cell(dataset="digits", victim="mnistnet", cut="split-2", defense=defense, profile="smoke", seed=0,
                attack="sdar", protocol=protocol, defense_knobs=params)


def pre_training_attack(cell, data, granted=SDAR.requires, **kwargs):
    """Built the way the attack-cell runner builds a co-training attack: from an untrained model's view."""
    model, indices = initial_model(cell, data, PROFILE)
    view, _ = build_view(cell=cell, model=model, data=data, client_indices=indices, granted=granted,
                         n_targets=PROFILE.targets, with_targets=False)
    return SDAR(view=view, profile="smoke", seed=cell.seed, **kwargs)


def watched(cell, data, attack, n_targets, profile=PROFILE, **train_kwargs):
    """Train the victim with ``attack`` watching, hand it the trained view; the view and its truth."""
    trained = train_victim(cell, data=data, profile=profile, observers=[attack], **train_kwargs)
    view, truth = build_view(cell=cell, model=trained.model, data=data, client_indices=trained.client_indices,
                             granted=SDAR.requires, n_targets=n_targets)
    attack.update_view(view)
    return view, truth


DEFENSES = [("raw", {}), ("lightsplit-f+dp", {"cr": 8.0, "sigma": 0.02}), ("lightsplit-l", {"cr": 8.0})]


def test_registered_with_its_threat_model():
    assert ATTACKS.get("sdar") is SDAR and SDAR.threat_model is ThreatModel.COTRAIN
    assert SDAR.requires == {Capability.AUX_DATA, Capability.CLIENT_ARCHITECTURE, Capability.DEFENSE_PUBLIC_STATE}
    paper = CONFIGS["paper"]
    assert (paper.lambda1, paper.lambda2, paper.e_lr, paper.d_lr, paper.hs_lr, paper.adam_eps) == (
        0.02, 1e-5, 1e-3, 5e-4, 1e-3, 1e-7)
    assert paper.e_dis_layers[0] == (64, 1) and paper.d_dis_layers == ((64, 1), (128, 2), (128, 2), (256, 2))


@pytest.mark.parametrize("defense,params", DEFENSES)
def test_observing_does_not_change_the_victim(digits, defense, params):
    cell = make_cell(defense, **params)
    plain = train_victim(cell, data=digits, profile=PROFILE)
    attack = pre_training_attack(cell, digits)
    watched = train_victim(cell, data=digits, profile=PROFILE, observers=[attack])
    assert len(attack.history["e_dis_loss"]) == 4  # it did run: one iteration per victim step
    a, b = plain.model.state_dict(), watched.model.state_dict()
    assert a.keys() == b.keys()
    for name in a:  # parameters, BatchNorm running statistics, DP's calibrated clip, R
        assert torch.equal(a[name], b[name]), name
    assert plain.metrics["accuracy"] == watched.metrics["accuracy"]
    assert [m.training for m in plain.model.modules()] == [m.training for m in watched.model.modules()]
    assert all(p.requires_grad for p in watched.model.parameters())


class Snapshot:
    """Records the server's gradients, parameter flags and module modes when called."""

    def __init__(self):
        self.states = []

    def on_step(self, view):
        modules = [view.server.backbone, view.server.defense]
        self.states.append((
            [None if p.grad is None else p.grad.clone() for m in modules for p in m.parameters()],
            [p.requires_grad for m in modules for p in m.parameters()],
            [x.training for m in modules for x in m.modules()],
        ))


def test_a_step_leaves_the_server_modules_exactly_as_it_found_them(digits):
    cell = make_cell("lightsplit-l", cr=8.0)
    attack, before, after = pre_training_attack(cell, digits), Snapshot(), Snapshot()
    torch.manual_seed(0)
    trainer = SplitTrainer(model=build_model(cell, digits), lr=1e-3, observers=[before, attack, after])
    trainer.model.train()
    x, y = digits.members.x[:32], digits.members.y[:32]
    for _ in range(2):
        trainer.step(0, x, y)
    for (grads_a, flags_a, modes_a), (grads_b, flags_b, modes_b) in zip(before.states, after.states):
        assert all(ga is not None and torch.equal(ga, gb) for ga, gb in zip(grads_a, grads_b))
        assert flags_a == flags_b and modes_a == modes_b and all(modes_a)


def test_frozen_restores_mixed_flags():
    net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
    net[1].eval()
    net[0].bias.requires_grad_(False)
    with frozen(net):
        assert not any(p.requires_grad for p in net.parameters()) and not any(m.training for m in net.modules())
    assert [m.training for m in net.modules()] == [True, True, False]
    assert [p.requires_grad for p in net.parameters()] == [True, False, True, True]


@pytest.mark.parametrize("defense,params,protocol", [
    ("raw", {}, "ushaped"), ("lightsplit-f", {"cr": 8.0}, "ushaped"), ("topk", {"cr": 8.0}, "vanilla"),
])
def test_end_to_end_attack_cell(digits, tmp_path, defense, params, protocol):
    cell = make_cell(defense, protocol=protocol, **params)
    metrics, notes = run_attack_cell(cell, data=digits, profile=PROFILE, cache_dir=None, artifacts_dir=tmp_path)
    for key in ("ssim", "mse", "masked_mse", "accuracy", "sdar_e_dis_loss", "sdar_label_acc", "sdar_step_ms",
                "sdar_payload_mmd", "sdar_payload_mmd_floor", "sdar_image_mmd", "sdar_image_mmd_floor"):
        assert metrics[key] is not None and math.isfinite(metrics[key]), key
    assert metrics["diverged"] == 0.0 and metrics["attack_targets"] == PROFILE.targets
    assert metrics["sdar_iterations"] == 4
    assert (metrics["sdar_client_label_acc"] is None) == (protocol == "ushaped")
    assert (tmp_path / f"{cell.id}.png").exists()


def test_reconstructions_lie_in_the_unit_interval_and_learning_lowers_the_decoder_loss(digits):
    cell = make_cell()
    attack = pre_training_attack(cell, digits)
    _, truth = watched(cell, digits, attack, 16, epochs=6)
    out = attack.run()
    assert out.reconstructions.shape == truth.x.shape
    assert out.reconstructions.min() >= 0 and out.reconstructions.max() <= 1
    mse = attack.history["decoder_mse"]
    assert len(mse) == 24 and sum(mse[-4:]) < sum(mse[:4])


def test_the_payload_discriminator_reads_cut_maps_whatever_the_defense(digits):
    for defense, params in [("raw", {}), ("lightsplit-f", {"cr": 8.0})]:  # a (k,) payload, a (C, h, w) cut map
        cell = make_cell(defense, **params)
        attack = pre_training_attack(cell, digits)
        train_victim(cell, data=digits, profile=PROFILE, observers=[attack])
        assert isinstance(attack.nets["e_dis"], MapDiscriminator)
        assert attack.nets["e_dis"].body[0].in_channels == attack.view.cut_shape[0]


def test_iterations_past_one_a_step_read_fresh_draws_of_what_was_observed(digits):
    # At budget 4 each step's first iteration reads its own payload and the other three read draws
    # from the observed buffer: never the step's batch again (the critic memorised a batch it was
    # shown k times in a row: issue 39).
    cell = make_cell()
    attack = pre_training_attack(cell, digits, budget=4.0)
    seen, iterate = [], attack._iterate

    def spy(view, real, y_real, *, current):
        with torch.no_grad():
            step_real = view.server.defense.cut_map(view.payload)
        seen.append((current, torch.equal(real, step_real), real.shape))
        iterate(view, real, y_real, current=current)

    attack._iterate = spy
    train_victim(cell, data=digits, profile=PROFILE, observers=[attack])
    assert len(seen) == 16 and [s[0] for s in seen] == [True, False, False, False] * 4
    assert all(same for current, same, _ in seen if current)
    assert not any(same for current, same, _ in seen if not current)
    assert len({shape for *_, shape in seen}) == 1 and len(attack.observed) == 4 * PROFILE.batch_size


class MatchedSimulator:
    """An oracle the threat model does not grant: before each step SDAR watches, its simulator's head
    takes the live client head's weights, so the simulated cut maps are the client's."""

    def __init__(self, attack, live_models):
        self.attack, self.live_models = attack, live_models

    def on_step(self, view):
        self.attack.nets["e"].head.load_state_dict(self.live_models[-1].heads[0].state_dict())
        self.attack.on_step(view)

    def __getattr__(self, name):
        return getattr(self.attack, name)


def test_with_a_simulator_matched_to_the_client_it_beats_the_mean_image(digits, monkeypatch):
    # SDAR's decoding half: the decoder trained on the simulator's pairs decodes the targets' payloads.
    # Smoke victim trained 25 epochs (100 steps), 4 iterations a step. Floor: the mean aux image for every
    # target. Seen on seeds 0-3: 0.29-0.37x the floor, payload MK-MMD <= 0.008 (issue 39). The whole game
    # at this scale (the simulator learnt) leaves the simulator off the client's maps on every seed
    # (MK-MMD 1.8-3.7 against a floor of -0.06) and scores 0.72-1.21x: chance, not a test. At the cpu
    # profile on MNIST it reconstructs (results/issue41-mnist: raw x4 SSIM 0.947).
    live_models = []
    fresh_model = training._fresh_model

    def recorded(cell, data):
        model, indices = fresh_model(cell, data)
        live_models.append(model)
        return model, indices

    monkeypatch.setattr(training, "_fresh_model", recorded)
    cell = dataclasses.replace(make_cell(), seed=1)
    attack = pre_training_attack(cell, digits, budget=4.0)
    view, truth = watched(cell, digits, MatchedSimulator(attack, live_models), PROFILE.targets,
                          profile=dataclasses.replace(PROFILE, epochs=25))
    out = attack.run()
    floor = float(((view.aux.inputs.mean(0, keepdim=True) - truth.x) ** 2).mean())
    mse = float(((out.reconstructions - truth.x) ** 2).mean())
    assert mse < 0.6 * floor, (mse, floor)
    assert out.scores["sdar_payload_mmd"] < 0.05  # the oracle is wired: simulated maps are the client's


def test_the_attack_is_reproducible(digits):
    cell = make_cell()
    runs = []
    for _ in range(2):
        attack = pre_training_attack(cell, digits)
        train_victim(cell, data=digits, profile=PROFILE, observers=[attack])
        runs.append(attack.history["decoder_mse"])
    assert runs[0] == runs[1]


def test_a_collapsed_run_decodes_with_its_last_healthy_snapshot(digits):
    # SDAR on raw MNIST at ×16 seed 0 collapses whatever feeds its critic (issue 39): the attacker sees
    # its own critic win and falls back on the networks of its last healthy window.
    cell = make_cell()
    attack = pre_training_attack(cell, digits)
    watched(cell, digits, attack, 16)
    window = attack.config.window
    assert attack.watch.healthy is not None and attack.watch.healthy[0] == 4  # the smoke window: 4 iterations
    healthy = attack.run()
    assert healthy.scores["sdar_collapsed"] == 0.0 and healthy.scores["sdar_decoded_at"] == 4
    critic_wins_a_window(attack)
    with torch.no_grad():
        for p in attack.nets["d"].parameters():
            p.add_(1.0)  # what the collapse did to the decoder
    restored = attack.run()
    assert restored.scores["sdar_collapsed"] == 1.0 and not restored.diverged
    assert restored.scores["sdar_decoded_at"] == 4 and restored.scores["sdar_iterations"] == 4 + window
    assert torch.equal(restored.reconstructions, healthy.reconstructions)
    attack.watch.healthy = None  # a run that collapsed before any healthy window
    assert attack.run().diverged


def critic_wins_a_window(attack):
    """Record one window of iterations in which the payload critic won outright (e_dis loss 0)."""
    for _ in range(attack.config.window):
        attack._records.append(*(torch.tensor(v) for v in (0.0, 0.5, 0.9, 0.01, 1.4)))
        attack._timings["ms"].append(1.0)
        attack._timings["cpu_ms"].append(1.0)


def test_construction_needs_aux_data(digits):
    cell = make_cell()
    with pytest.raises(MissingCapabilityError, match="aux_data"):
        pre_training_attack(cell, digits, granted=frozenset({Capability.CLIENT_ARCHITECTURE,
                                                             Capability.DEFENSE_PUBLIC_STATE}))


def test_rejects_bad_settings(digits):
    attack = pre_training_attack(make_cell(), digits)
    with pytest.raises(ValueError, match="profile"):
        SDAR(view=attack.view, profile="huge")
    with pytest.raises(RuntimeError, match="co-training"):
        attack.run()
    base = {"decoder_low": (4,), "decoder_high": (), "e_dis_layers": ((4, 2),), "e_dis_widths": (4,),
            "d_dis_layers": ((4, 2),)}
    SDARConfig(**base)
    for bad in ({"decoder_low": ()}, {"e_dis_layers": ((4, 3),)}, {"lambda1": -0.1}, {"flip_rate": 1.0},
                {"e_lr": 0.0}, {"adam_eps": 0.0}, {"dropout": 1.0}, {"window": 0}, {"d_dis_layers": ()}):
        with pytest.raises(ValueError, match="invalid configuration"):
            SDARConfig(**{**base, **bad})


def test_lambda1_scale_scales_the_adversarial_weight_and_the_critic_rate_only(digits):
    plain = pre_training_attack(make_cell(), digits)
    scaled = pre_training_attack(make_cell(), digits, lambda1_scale=2.5)
    assert scaled.config.lambda1 == pytest.approx(2.5 * plain.config.lambda1)
    assert dataclasses.replace(scaled.config, lambda1=plain.config.lambda1) == plain.config
    assert scaled.opt_e_dis.param_groups[0]["lr"] == pytest.approx(2.5 * plain.opt_e_dis.param_groups[0]["lr"])
    assert pre_training_attack(make_cell(), digits, lambda1_scale=1.0).config == plain.config
    with pytest.raises(ValueError, match="lambda1_scale 30 puts lambda1 at 1.2"):
        pre_training_attack(make_cell(), digits, lambda1_scale=30)


def test_moment_tie_adds_its_weight_times_the_gap_to_the_observed_payloads_running_mean(digits):
    g = torch.Generator().manual_seed(0)
    real, fake = torch.randn(6, 8, 12, 12, generator=g), torch.randn(6, 8, 12, 12, generator=g)
    losses = {}
    for weight in (0.0, 2.0):
        attack = pre_training_attack(make_cell(), digits, moment_tie=weight)
        losses[weight] = attack.simulator_loss(task=torch.tensor(1.0), fake_logits=torch.zeros(6, 1), fake=fake, real=real)
        assert (attack.payload_moments.moments is None) == (weight == 0)  # at 0 nothing is tracked
    expected = PayloadMomentTie()
    expected.observe(real)
    assert float(losses[0.0]) == pytest.approx(1.0 + CONFIGS["smoke"].lambda1 * math.log(2), rel=1e-6)
    assert float(losses[2.0] - losses[0.0]) == pytest.approx(2.0 * float(expected.gap(fake)), rel=1e-5)
    with pytest.raises(ValueError, match="moment_tie must be >= 0"):
        pre_training_attack(make_cell(), digits, moment_tie=-1.0)


def test_a_tied_run_on_top_k_reports_how_often_the_spread_floor_bound(digits, tmp_path):
    cell = dataclasses.replace(make_cell("topk", cr=8.0), attack_knobs={"moment_tie": 1.0})
    metrics, notes = run_attack_cell(cell, data=digits, profile=PROFILE, cache_dir=None, artifacts_dir=tmp_path)
    assert 0 < metrics["sdar_tie_floored"] < 1 and "floored" in notes["sdar_tie_floored"]
    untied, _ = run_attack_cell(make_cell(), data=digits, profile=PROFILE, cache_dir=None, artifacts_dir=tmp_path)
    assert "sdar_tie_floored" not in untied


def test_the_grid_gives_lambda1_scale_to_sdar_alone():
    from bench.run.grid import GridSpec, expand

    cells = expand(GridSpec(datasets=("digits",), defenses=("raw",), attacks=("sdar", "decoder-ref"),
                            profile="smoke", seeds=(0,), knobs={"lambda1_scale": (2.5,)}))
    knobs = {c.attack: c.attack_params() for c in cells}
    assert knobs["sdar"] == {"lambda1_scale": 2.5} and knobs["decoder-ref"] == {}


@pytest.mark.parametrize("cut,image", [((8, 12, 12), (1, 28, 28)), ((32, 16, 16), (3, 32, 32)), ((120,), (1, 28, 28))])
def test_decoder_lands_on_the_image_size(cut, image):
    for low, high in [((8,), ()), ((), (8, 4))]:
        decoder = SDARDecoder(cut, image, low=low, high=high, num_classes=10)
        out = decoder(torch.rand(3, *cut), torch.tensor([0, 1, 9]))
        assert out.shape == (3, *image) and out.min() >= 0 and out.max() <= 1
    assert upsampling(4, 1, (12, 12), (28, 28)).kernel_size == (6, 6)


def test_too_few_targets_skip_the_diagnostics_not_the_attack(digits):
    cell = make_cell()
    attack = pre_training_attack(cell, digits)
    _, truth = watched(cell, digits, attack, 3)
    out = attack.run()
    assert out.reconstructions.shape == truth.x.shape and "sdar_payload_mmd" not in out.scores
    assert out.notes["sdar_payload_mmd"].startswith("not computed")


def test_a_collapsed_window_starts_a_fresh_attacker_for_the_rest_of_the_budget(digits):
    cell = make_cell()
    attack = pre_training_attack(cell, digits)
    watched(cell, digits, attack, 16)
    before = {name: [p.detach().clone() for p in net.parameters()] for name, net in attack.nets.items()}
    old_nets, old_opt = attack.nets, attack.opt_e
    critic_wins_a_window(attack)
    attack._at_window_end()
    iterations = len(attack.history["ms"])
    assert attack.watch.restarts == [iterations]
    assert attack.nets is not old_nets and attack.opt_e is not old_opt
    for name, params in before.items():  # every network anew, from a new seed
        assert any(not torch.equal(p, q) for p, q in zip(params, attack.nets[name].parameters())), name
    assert attack.watch.healthy[0] == 4  # the snapshot of the healthy window is kept
    out = attack.run()
    assert out.scores["sdar_restarts"] == 1.0 and out.scores["sdar_restarted_at"] == iterations
    nets = attack.nets
    critic_wins_a_window(attack)  # a second collapse, with no healthy window between: another attacker
    attack._at_window_end()
    assert attack.nets is not nets and attack.watch.restarts == [iterations, iterations + attack.config.window]
    again = attack.run()  # the run ends collapsed: its last healthy snapshot, the first attacker's, decodes
    assert again.scores["sdar_collapsed"] == 1.0 and again.scores["sdar_decoded_at"] == 4


def test_the_simulator_starts_from_the_clients_payload_offset_and_again_after_a_restart(digits):
    cell = make_cell("shredder", cr=4.0)
    attack = pre_training_attack(cell, digits)
    watched(cell, digits, attack, 16)
    simulated, observed = attack.nets["e"].defense.client_side.noise, attack._last_payload
    assert simulated.abs().mean() > 0.3
    # aligned on the first payload, then trained: close to the last one's offset, unlike a fresh draw
    own = attack.nets["e"].train()(attack.aux_x[:len(observed)]).detach()
    assert (own.mean(0) - observed.mean(0)).abs().mean() < 0.3
    critic_wins_a_window(attack)
    attack._at_window_end()
    own = attack.nets["e"].train()(attack.aux_x[:len(observed)]).detach()
    assert torch.allclose(own.mean(0), observed.mean(0), atol=1e-4)
