"""Every registered attack against every registered defense it applies to, on the smoke profile.

Image attacks meet each defense on sklearn's digits (MnistNet, split-2: an 8×12×12 map); tabular
attacks meet it on a synthetic UCI-HAR-shaped set (the HAR MLP, a 256-wide vector cut). A pair that
cannot apply is skipped with its reason, stated in :data:`CANNOT_APPLY`. Each pair goes through the
same cell runner as ``bench run``, so its contract decides the victim it meets.
"""
import math

import pytest

from attacks import ATTACKS
from bench.data.splits import carve
from bench.profiles import get_profile
from bench.run.attack_cell import run_attack_cell
from bench.run.cell import Cell
from defenses import DEFENSES
from tests.attacks.synthetic_har import synthetic_har_dataset
from tests.defenses.knob_values import smoke_knobs

PROFILE = get_profile("smoke")
# One xdist group: the module's victim cache serves every pair on one worker (each worker would train every
# victim again); the largest group, scheduled first.
pytestmark = pytest.mark.xdist_group("every-pair")
SETTINGS = {  # data kind → (dataset name, victim, cut)
    "image": ("digits", "mnistnet", "split-2"),
    "tabular": ("har", "har-mlp", "d256"),
}
# What an attack of each data kind must score: a reconstruction's SSIM, a probe's R² or re-ID accuracy
# (or its own headline metric: a label attack's AUC or accuracy).
LEAKAGE_METRICS = {"image": ("ssim",), "tabular": ("median_r2", "reid_accuracy")}
CANNOT_APPLY = {
    ("tabular", "block-local"): "block-local tiles a C×H×W map; the HAR MLP's cut is a 256-wide vector",
}
# Registered by other test modules as test doubles, not attacks of the suite.
TEST_DOUBLES = ("test-",)
DEFENSE_NAMES = [n for n in DEFENSES.names() if n not in ("broken-defense", "random-subsample")] + ["lightsplit-f+dp"]


def _pairs():
    for attack in ATTACKS.names():
        if attack.startswith(TEST_DOUBLES):
            continue
        for kind in ATTACKS.get(attack).kinds:
            for defense in DEFENSE_NAMES:
                reason = CANNOT_APPLY.get((kind, defense))
                marks = [pytest.mark.skip(reason=reason)] if reason else []
                yield pytest.param(attack, kind, defense, marks=marks, id=f"{attack}-{defense}")


@pytest.fixture(scope="module")
def datasets(digits):
    return {
        "image": digits,
        "tabular": carve(synthetic_har_dataset(per_activity=16, seed=0), PROFILE),
    }


@pytest.fixture(scope="module")
def victims(tmp_path_factory):
    """One victim cache for the module: passive attacks on the same victim train it once."""
    return tmp_path_factory.mktemp("victims")


@pytest.mark.parametrize("attack,kind,defense", list(_pairs()))
def test_attack_runs_against_defense(attack, kind, defense, datasets, victims):
    dataset, victim, cut = SETTINGS[kind]
    knobs = smoke_knobs(defense)
    cell = Cell(dataset=dataset, victim=victim, cut=cut, defense=defense, defense_knobs=knobs, profile="smoke",
                seed=0, attack=attack)
    metrics, _ = run_attack_cell(cell, data=datasets[kind], profile=PROFILE, cache_dir=victims, artifacts_dir=None)
    assert 0.0 <= metrics["accuracy"] <= 1.0
    assert metrics["diverged"] in (0.0, 1.0)
    # a reconstruction's or a probe's metric of its kind, or the attack's declared headline (label attacks)
    leakage = [metrics.get(m) for m in (*LEAKAGE_METRICS[kind], ATTACKS.get(attack).headline_metric)]
    assert any(v is not None and math.isfinite(v) for v in leakage), sorted(metrics)
