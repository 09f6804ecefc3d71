"""The ``budget`` knob every attack declares: a multiplier on all its iteration and epoch counts."""
import pytest

from attacks import ATTACKS, BUDGET, Capability
from attacks.base import scale_counts
from attacks.decoder_nets import DecoderConfig
from attacks.fora_config import CONFIGS as FORA_CONFIGS
from attacks.fsha_config import CONFIGS as FSHA_CONFIGS
from attacks.unsplit import CONFIGS as UNSPLIT_CONFIGS
from bench.run.attacker_views import build_view
from bench.run.training import train_victim
from tests.attacks.test_sdar import PROFILE, make_cell, pre_training_attack


def test_every_attack_declares_the_budget_knob_with_default_one():
    for name in ATTACKS.names():
        knobs = {k.name: k for k in ATTACKS.get(name).knobs}
        assert knobs.get("budget") is BUDGET, name
    assert BUDGET.default == 1.0


def test_scale_counts_is_the_identity_at_one_and_rounds_to_at_least_one():
    config = DecoderConfig(epochs=15, width=64)
    assert scale_counts(config, 1.0, "epochs") is config
    assert scale_counts(config, 4.0, "epochs").epochs == 60
    assert scale_counts(config, 0.5, "epochs").epochs == 8  # round(7.5) = 8 (banker's rounding: even)
    assert scale_counts(config, 0.01, "epochs").epochs == 1
    assert scale_counts(config, 4.0, "epochs").width == 64  # sizes do not scale


@pytest.mark.parametrize("budget,iterations", [(1.0, 4), (0.5, 2), (2.0, 8), (0.25, 1)])
def test_sdar_runs_budget_iterations_per_observed_step(digits, budget, iterations):
    cell = make_cell("raw")
    attack = pre_training_attack(cell, digits, budget=budget)
    train_victim(cell, data=digits, profile=PROFILE, observers=[attack])  # 4 victim steps in smoke
    assert len(attack.history["e_dis_loss"]) == iterations


def test_fora_fsha_and_unsplit_scale_their_counts_with_the_budget(digits):
    cell = make_cell("raw")
    victim = train_victim(cell, data=digits, profile=PROFILE)
    view, _ = build_view(cell=cell, model=victim.model, data=digits, client_indices=victim.client_indices,
                         granted=frozenset(Capability), n_targets=16)
    fora = ATTACKS.get("fora")(view=view, profile="cpu", budget=4.0).config
    assert fora.iterations == 4 * FORA_CONFIGS["cpu"].iterations
    assert fora.decoder.epochs == 4 * FORA_CONFIGS["cpu"].decoder.epochs
    assert ATTACKS.get("fsha")(view=view, profile="cpu", budget=0.5).hijacked_epochs == FSHA_CONFIGS["cpu"].epochs // 2
    unsplit = ATTACKS.get("unsplit")(view=view, profile="cpu", budget=2.0).config
    assert unsplit.outer_steps == 2 * UNSPLIT_CONFIGS["cpu"].outer_steps
    assert unsplit.input_steps == UNSPLIT_CONFIGS["cpu"].input_steps  # the alternation itself is unchanged
