"""An attack's budget table: entries are checked, cite results that exist, and resolve per setting."""
import re
from pathlib import Path

import pytest

from attacks import ATTACKS
from attacks.budget_table import MeasuredBudget, NoMeasuredBudget, measured_budget

REPO = Path(__file__).resolve().parents[2]
ENTRY = dict(profile="cpu", dataset="mnist", victim="mnistnet", cut="split-2", budget=4, verdict="unknown",
             evidence="results/issue12-convergence: x4 gains +0.1")


@pytest.mark.parametrize("field,value,message", [
    ("profile", "laptop", "unknown profile 'laptop'"),
    ("verdict", "fine", "unknown verdict 'fine'"),
    ("budget", 0, r"budget 0 is outside \(0, 1000\]"),
    ("budget", 1001, r"budget 1001 is outside"),
    ("evidence", "seen once on my laptop", "must cite the results folder"),
])
def test_an_entry_out_of_range_is_refused(field, value, message):
    MeasuredBudget(**ENTRY)
    with pytest.raises(ValueError, match=message):
        MeasuredBudget(**{**ENTRY, field: value})


@pytest.mark.parametrize("name", ATTACKS.names())
def test_every_entry_cites_a_results_folder_that_is_committed(name):
    for entry in ATTACKS.get(name).budget_table:
        folders = re.findall(r"results/([\w.-]+)", entry.evidence)
        assert folders and all((REPO / "results" / f).is_dir() for f in folders), (name, entry.evidence)


def budget_of(name: str, **setting) -> float:
    return measured_budget(ATTACKS.get(name), name=name, **setting)


def test_a_setting_resolves_to_its_entry_a_closed_form_to_one():
    assert budget_of("sdar", profile="cpu", dataset="mnist", victim="mnistnet", cut="split-2") == 16
    assert budget_of("fora", profile="cpu", dataset="cifar10-jpeg", victim="mobilenet", cut="l2") == 1
    assert budget_of("linear-probe", profile="paper", dataset="gtsrb", victim="simplecnn", cut="l2h") == 1
    with pytest.raises(NoMeasuredBudget, match=r"attack 'unsplit' has no measured budget on cpu cifar10-jpeg "
                                               r"simplecnn/l2h \(its budget table has: cpu mnist mnistnet/split-2\)"):
        budget_of("unsplit", profile="cpu", dataset="cifar10-jpeg", victim="simplecnn", cut="l2h")
