"""The attack-cell runner: each threat model gets the run it declares, and nothing more."""
import torch

from attacks import ATTACKS, ActiveAttack, AttackOutput, Capability, CotrainAttack
from bench.data import DATASETS
from bench.data.splits import carve
from bench.profiles import get_profile
from bench.run.attack_cell import VictimRunsForCell, run_attack_cell
from bench.run.cell import Cell
from bench.run.training import train_victim
from defenses.dp import GaussianPayloadNoise

PROFILE = get_profile("smoke")


def _data(tmp_path):
    return carve(DATASETS.get("digits")(tmp_path), PROFILE)


@ATTACKS.register("test-cotrain", force=True)
class CountingCotrain(CotrainAttack):
    requires = frozenset({Capability.AUX_DATA})
    kinds, headline_metric, configs = ("image",), "ssim", {}
    instances = []

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.steps, self.targets_at_start = 0, len(self.view.targets)
        CountingCotrain.instances.append(self)

    def on_step(self, view):
        self.steps += 1
        torch.randn(10)  # draws from the (forked) global RNG: must not change the victim

    def run(self):
        return AttackOutput(scores={"steps_seen": float(self.steps), "targets": float(len(self.view.targets))})


@ATTACKS.register("test-active", force=True)
class ZeroGradientServer(ActiveAttack):
    requires = frozenset()
    kinds, headline_metric, configs = ("image",), "ssim", {}
    hijacked_epochs = 2

    def client_gradient(self, view):
        return torch.zeros_like(view.grad)

    def run(self):
        return AttackOutput()


def test_cotrain_attack_watches_every_step_then_sees_the_trained_targets(tmp_path):
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="lightsplit-f+dp", defense_knobs={"cr": 8.0, "sigma": 0.02},
                profile="smoke", seed=0, attack="test-cotrain")
    data = _data(tmp_path)
    metrics, _ = run_attack_cell(cell, data=data, profile=PROFILE, cache_dir=tmp_path / "ck", artifacts_dir=None)
    attack = CountingCotrain.instances[-1]
    assert attack.targets_at_start == 0 and metrics["targets"] == PROFILE.targets
    assert metrics["steps_seen"] == len(data.members) // PROFILE.batch_size + (len(data.members) % PROFILE.batch_size > 1)
    # the observed run is the same victim as an unobserved one, so the cache may serve the others
    plain = train_victim(cell, data=data, profile=PROFILE)
    cached = train_victim(cell, data=data, profile=PROFILE, cache_dir=tmp_path / "ck")
    assert cached.from_cache
    for a, b in zip(plain.model.state_dict().values(), cached.model.state_dict().values()):
        assert torch.equal(a, b)


def test_active_attack_gets_its_own_uncached_run_of_its_own_length(tmp_path):
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=0,
                attack="test-active")
    data = _data(tmp_path)
    run_attack_cell(cell, data=data, profile=PROFILE, cache_dir=tmp_path / "ck", artifacts_dir=None)
    assert not (tmp_path / "ck").exists()
    # with a zero gradient at the cut the head never moves
    hijacked = train_victim(cell, data=data, profile=PROFILE, active=ZeroGradientServer.__new__(ZeroGradientServer))
    fresh = train_victim(cell, data=data, profile=PROFILE, epochs=1)
    torch.manual_seed(0)
    from bench.run.training import build_model, seed_everything

    seed_everything(0)
    initial = build_model(cell, data)
    assert torch.equal(hijacked.model.heads[0][0].weight, initial.heads[0][0].weight)
    assert not torch.equal(fresh.model.heads[0][0].weight, initial.heads[0][0].weight)


def _clip(module):
    (dp,) = [m for m in module.modules() if isinstance(m, GaussianPayloadNoise)]
    return dp.clip_norm.clone(), bool(dp.calibrated)


def test_a_cotrain_attacker_simulates_the_clients_dp_clip_and_the_global_rng_is_left_alone(tmp_path):
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw+dp", defense_knobs={"sigma": 0.02},
                profile="smoke", seed=3, attack="sdar")
    data = _data(tmp_path)
    torch.manual_seed(11)
    state = torch.random.get_rng_state()
    view = VictimRunsForCell(cell, data=data, profile=PROFILE, cache_dir=None).view_before_training()
    assert torch.equal(torch.random.get_rng_state(), state)
    simulated_clip, calibrated = _clip(view.client_factory())
    victim_clip, _ = _clip(train_victim(cell, data=data, profile=PROFILE).model.defense)
    assert calibrated and torch.equal(simulated_clip, victim_clip)
