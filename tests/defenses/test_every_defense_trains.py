"""Every registered defense (and the DP compositions) runs through the grid and learns a small task.

The learning check trains each defense on sklearn's ``digits`` (offline, 10 classes, chance 0.1)
with 1,000 members, 5 epochs of batch 32, and asks for test accuracy ≥ ``BAR``. Measured at CR 4,
seeds 0-3, λ_WCC 1e-3 (σ 0.02 for DP): every defense reached ≥ 0.66 (seed 0, the one tested: ≥ 0.84;
raw 0.92, lightsplit-f 0.92, dp 0.90, lightsplit-f+dp 0.91, learned-1x1 0.84), while a
lightsplit-f whose payload is all zeros stays at 0.10. ``BAR`` = 0.3 = 3× chance sits far from
both. CR 4 rather than 8: at CR 8 this cut's 8 channels give learned 1×1 a one-channel code, which
died at seed 0 (loss stuck at ln 10, accuracy 0.10; 1 of 8 seeds measured) — an optimisation
hazard of that bottleneck, not a broken defense; at CR 4 (two channels) 8 of 8 seeds learned.
"""
import dataclasses

import pytest

from bench.data import digits
from bench.data.splits import carve
from bench.profiles import Profile
from bench.run.cell import Cell
from bench.run.cell_runner import RunContext
from bench.run.runner import run_grid
from bench.run.store import ResultStore
from bench.run.training import train_victim
from defenses import DEFENSES, PAYLOAD_TRANSFORMS
from defenses.lightsplit import LightSplitF
from tests.defenses.knob_values import smoke_knobs

NAMES = DEFENSES.names() + PAYLOAD_TRANSFORMS.names() + ["lightsplit-f+dp", "topk+dp"]

LEARN = Profile(name="smoke", members=1000, nonmembers=64, test=400, epochs=5, batch_size=32)
LEARN_CR = 4.0
CHANCE = 0.1
BAR = 3 * CHANCE
# MID's released σ floor (softplus(s − 0.5) ≥ 0.47 after a ReLU) drowns its posterior means at the
# start: at seed 0 its task loss stays flat for about four epochs. Measured on this fixture, seed 0:
# 0.255 after 5 epochs (every λ of its sweep fails), 0.73 after 15; seeds 1-3 reach 0.43-0.59 in 5.
# It gets 15 epochs against the same bar; the bar and every other defense's budget are unchanged.
EPOCHS = {"mid": 15}


def _knobs(defense: str, cr: float) -> dict:
    return smoke_knobs(defense, cr=cr, width=64)


def _learned_accuracy(defense: str, data) -> float:
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense=defense, profile=LEARN.name,
                seed=0, lambda_wcc=1e-3, defense_knobs=_knobs(defense, LEARN_CR))
    profile = dataclasses.replace(LEARN, epochs=EPOCHS.get(defense, LEARN.epochs))
    return train_victim(cell, data=data, profile=profile).metrics["accuracy"]


@pytest.fixture(scope="module")
def learnable():
    """Members, non-members and test images of ``digits`` carved for :data:`LEARN`."""
    return carve(digits.load(), LEARN)


@pytest.mark.parametrize("defense", NAMES)
def test_defense_runs_in_smoke_profile(defense, tmp_path):
    params = _knobs(defense, 8.0)
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense=defense, profile="smoke",
                seed=0, lambda_wcc=1e-3, defense_knobs=params)
    store = ResultStore(tmp_path)
    summary = run_grid([cell], store=store, ctx=RunContext(data_root=tmp_path))
    record = store.load(cell)
    assert summary.failed == [], record.error
    expected_cr = 1.0 if "cr" not in params else 8.0
    # At most 1% under the nominal CR, never over: a mechanism may add a few index bytes to its
    # values (DISCO's one-byte channel index: 7.986 at CR 8).
    assert expected_cr / 1.01 <= record.metrics["realized_cr"] <= expected_cr * (1 + 1e-9)


@pytest.mark.parametrize("defense", NAMES)
def test_defense_learns_a_small_task(defense, learnable):
    accuracy = _learned_accuracy(defense, learnable)
    assert accuracy >= BAR, f"{defense}: accuracy {accuracy:.3f} is not clearly above chance {CHANCE}"


def test_planted_zero_payload_stays_at_chance(learnable, monkeypatch):
    """The learning check can fail: a lightsplit-f that sends zeros learns nothing."""
    monkeypatch.setattr(LightSplitF, "encode", lambda self, z: 0.0 * self.projection.project(z))
    accuracy = _learned_accuracy("lightsplit-f", learnable)
    assert accuracy < BAR
