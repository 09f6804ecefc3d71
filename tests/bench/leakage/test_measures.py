"""The attack-free measures of a victim: absent exactly where a note says why, each equal to an
independent computation through the defense's own code, and harmless to the run."""
import copy
import math

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cdist

from bench.leakage import measures
from bench.leakage.channel import gaussian_channel_bits, gaussian_channel_class_bits
from bench.leakage.fisher import gaussian_fisher_trace, heteroscedastic_fisher_trace
from bench.leakage.measures import (
    DETERMINISTIC,
    FISHER_SAMPLES,
    GROUPED,
    MEASURE_SEED,
    MID_CHANNEL,
    NO_GAUSSIAN_NOISE,
    NO_NOISE_SCALE,
    NOISY_BASE,
    SHREDDER_NOT_REGULAR,
    SPARSE,
    ZERO_FISHER,
    attack_free_measures,
    attack_free_notes,
)
from bench.leakage.names import CHANNEL_BITS, CHANNEL_CLASS_BITS, DCOR, DFIL, DFIL_MSE_BOUND, MEASURES
from bench.profiles import get_profile
from bench.run.cell import Cell
from bench.run.device import seeded_permutation
from bench.run.training import initial_model, train_victim
from defenses import DEFENSES
from defenses.dp import GaussianPayloadNoise, clip_rows
from defenses.payload import values_of
from tests.defenses.knob_values import smoke_knobs

SMOKE = get_profile("smoke")


def model_for(defense, data, **overrides):
    """The untrained, calibrated model of a smoke cell (the measures read any model alike)."""
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense=defense,
                defense_knobs=smoke_knobs(defense, **overrides), profile="smoke", seed=0)
    return initial_model(cell, data, SMOKE)


def noted(channel=None, fisher=None):
    return {**({CHANNEL_BITS: channel, CHANNEL_CLASS_BITS: channel} if channel else {}),
            **({DFIL: fisher, DFIL_MSE_BOUND: fisher} if fisher else {})}


NOTES = {
    "raw": noted(NO_GAUSSIAN_NOISE, DETERMINISTIC),
    "lightsplit-f": noted(NO_GAUSSIAN_NOISE, DETERMINISTIC),
    "lightsplit-f+dp": {},
    "raw+dp": {},
    "mid": noted(MID_CHANNEL),
    "shredder": noted(NO_GAUSSIAN_NOISE, SHREDDER_NOT_REGULAR),
    "topk+dp": noted(SPARSE, SPARSE),
    "c3sl+dp": noted(GROUPED, GROUPED),
    "mid+dp": noted(fisher=NOISY_BASE),
}


@pytest.mark.parametrize("defense", list(NOTES))
def test_each_absent_measure_has_its_reason(defense, digits):
    model, _ = model_for(defense, digits)
    assert attack_free_notes(model.defense) == NOTES[defense]


def test_no_noise_at_sigma_zero_is_said(digits):
    model, _ = model_for("lightsplit-f+dp", digits, sigma=0.0)
    assert attack_free_notes(model.defense) == noted(NO_NOISE_SCALE, NO_NOISE_SCALE)


@pytest.mark.parametrize("defense", [n for n in DEFENSES.names() if not n.startswith(("broken", "random"))])
def test_every_defense_gets_the_distance_correlation_and_paired_notes(defense, digits):
    notes = attack_free_notes(model_for(defense, digits)[0].defense)
    assert DCOR not in notes and set(notes) <= set(MEASURES)
    assert (CHANNEL_BITS in notes) == (CHANNEL_CLASS_BITS in notes) and (DFIL in notes) == (DFIL_MSE_BOUND in notes)


@pytest.mark.parametrize("defense", ["raw", "lightsplit-f+dp", "mid", "shredder", "topk+dp", "c3sl", "mid+dp"])
def test_measures_are_none_exactly_where_a_note_says_why(defense, digits):
    model, indices = model_for(defense, digits)
    values = attack_free_measures(model, digits, indices)
    notes = attack_free_notes(model.defense, values)
    assert notes == attack_free_notes(model.defense)  # no measured value adds a reason here
    assert list(values) == list(MEASURES)
    assert {name for name, value in values.items() if value is None} == set(notes)
    assert all(math.isfinite(v) for v in values.values() if v is not None)
    if values[DFIL] is not None:
        assert values[DFIL] > 0 and values[DFIL_MSE_BOUND] == pytest.approx(1 / values[DFIL], rel=1e-12)


def test_a_vanishing_jacobian_leaves_the_mse_bound_absent_with_its_reason(digits):
    model, indices = model_for("mid", digits)
    with torch.no_grad():
        for parameter in model.defense.client_side.encoder.parameters():
            parameter.zero_()  # a constant posterior: no input moves the release
    values = attack_free_measures(model, digits, indices)
    assert values[DFIL] == 0 and values[DFIL_MSE_BOUND] is None
    assert attack_free_notes(model.defense, values) == {**NOTES["mid"], DFIL_MSE_BOUND: ZERO_FISHER}


def szekely_dcor(x: np.ndarray, y: np.ndarray) -> float:
    """Distance correlation on plain Euclidean distances, from its definition."""
    def centred(rows):
        dist = cdist(rows, rows)
        return dist - dist.mean(0) - dist.mean(1)[:, None] + dist.mean()

    a, b = centred(x), centred(y)
    return math.sqrt((a * b).mean() / math.sqrt((a * a).mean() * (b * b).mean()))


@torch.no_grad()
def payloads_of(model, x):
    model.eval()
    return values_of(model.defense.encode(model.head_of(0)(x))).flatten(1)


def test_the_distance_correlation_is_szekelys_on_every_member(digits):
    """The smoke carve has 256 members, under MEASURE_SAMPLES: all of them are read."""
    model, indices = model_for("lightsplit-f", digits)
    x = digits.members.x
    expected = szekely_dcor(x.flatten(1).double().numpy(), payloads_of(model, x).double().numpy())
    assert attack_free_measures(model, digits, indices)[DCOR] == pytest.approx(expected, abs=1e-4)


def noise_free_copy(defense):
    """The +dp defense with its noise switched off: its own forward then releases the clipped payload."""
    quiet = copy.deepcopy(defense)
    (transform,) = quiet.client_side.transforms
    transform.sigma = 0.0
    return quiet


def fisher_members(data):
    order = seeded_permutation(len(data.members), torch.Generator().manual_seed(MEASURE_SEED), device="cpu")
    return data.members.x[order[:FISHER_SAMPLES]]


def test_the_dp_bounds_read_the_clipped_payload_and_noise_of_sigma_times_clip(digits):
    model, indices = model_for("lightsplit-f+dp", digits)
    (transform,) = model.defense.client_side.transforms
    noise_std = float(transform.sigma * transform.clip_norm)
    assert abs(float(transform.clip_norm) - 1) > 0.05  # so a bound on σ alone would differ
    values = attack_free_measures(model, digits, indices)
    quiet, head = noise_free_copy(model.defense).eval(), model.head_of(0).eval()
    with torch.no_grad():
        clipped = values_of(quiet.encode(head(digits.members.x))).flatten(1)
    assert values[CHANNEL_BITS] == pytest.approx(gaussian_channel_bits(clipped, noise_std), rel=1e-6)
    assert values[CHANNEL_CLASS_BITS] == pytest.approx(
        gaussian_channel_class_bits(clipped, digits.members.y, noise_std), rel=1e-6)
    traces = gaussian_fisher_trace(lambda v: values_of(quiet.encode(head(v))).flatten(1), fisher_members(digits),
                                   noise_std, generator=torch.Generator().manual_seed(MEASURE_SEED))
    assert values[DFIL] == pytest.approx(float(traces.mean()) / digits.members.x[0].numel(), rel=1e-5)


def test_mid_dfil_reads_its_posterior_mean_and_std(digits):
    model, indices = model_for("mid", digits)
    values = attack_free_measures(model, digits, indices)
    head = model.head_of(0).eval()
    model.defense.eval()
    traces = heteroscedastic_fisher_trace(lambda v: model.defense.posterior(head(v)), fisher_members(digits),
                                          generator=torch.Generator().manual_seed(MEASURE_SEED))
    assert values[DFIL] == pytest.approx(float(traces.mean()) / digits.members.x[0].numel(), rel=1e-5)


def test_clip_rows_is_the_dp_transform_without_noise():
    values = torch.randn(8, 3, 4, 4) * torch.linspace(0.1, 3, 8).view(8, 1, 1, 1)
    transform = GaussianPayloadNoise(sigma=0.0)
    transform.calibrate(values)
    assert torch.allclose(clip_rows(values, transform.clip_norm), transform(values), atol=1e-6)


def test_the_measures_leave_the_random_state_and_the_mode_alone(digits):
    model, indices = model_for("lightsplit-f+dp", digits)
    model.train()
    state = torch.get_rng_state()
    first = attack_free_measures(model, digits, indices)
    assert torch.equal(torch.get_rng_state(), state) and model.training
    assert attack_free_measures(model, digits, indices) == first


def test_a_trained_victim_records_them_and_its_checkpoint_keeps_them(digits, tmp_path):
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="mid", defense_knobs=smoke_knobs("mid"),
                profile="smoke", seed=0)
    trained = train_victim(cell, data=digits, profile=SMOKE, cache_dir=tmp_path)
    assert set(MEASURES) <= set(trained.metrics) and trained.metrics[CHANNEL_BITS] is None
    assert trained.metrics[DFIL] > 0
    cached = train_victim(cell, data=digits, profile=SMOKE, cache_dir=tmp_path)
    assert cached.from_cache and {k: cached.metrics[k] for k in MEASURES} == {k: trained.metrics[k] for k in MEASURES}


def test_the_module_names_every_measure_it_records():
    assert measures.MEASURES is MEASURES and all(isinstance(v, str) and v for v in MEASURES.values())


@pytest.mark.parametrize("attack", ["none", "prior"])
def test_every_row_of_a_cell_carries_the_reason_an_absent_measure_is_absent(attack, digits):
    from bench.run.cell_runner import RunContext, run_cell

    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=0, attack=attack)
    metrics, notes = run_cell(cell, RunContext(data_root=None))
    assert metrics[DFIL] is None and notes[DFIL] == measures.attack_free_notes(build_raw())[DFIL]
    assert metrics[DCOR] is not None and DCOR not in notes


def build_raw():
    return DEFENSES.get("raw")(cut_shape=(8, 12, 12))
