"""A grid with label attacks beside an image attack: every report reads it, and the label attacks never
enter an image reconstruction's worst case (they compete on their own metrics only)."""
import json

import pytest

from bench.profiles import get_profile
from bench.report.leaderboard import leaderboard
from bench.report.worst_case import seed_worst_cases, worst_case
from tests.bench.cli.runner import run_cli
from tests.bench.report.smoke_grid import stored_smoke_grid

LABEL_ATTACKS = ("label-norm", "model-completion")
DEFENSES = [("raw", {}), ("lightsplit-f", {"cr": 8.0})]
# One xdist group: the module's grid is run on one worker, not on each.
pytestmark = pytest.mark.xdist_group("label-grid")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Smoke cells on digits: the victims, the aux decoder and two label attacks on raw and LightSplit-F."""
    attacks = [(attack, {}) for attack in ("none", "decoder", *LABEL_ATTACKS)]
    return stored_smoke_grid(tmp_path_factory.mktemp("label-grid"), DEFENSES, attacks)


def test_label_cells_record_their_metrics_and_chance_levels(results):
    table = results.table()
    label_rows = table[table["attack"].isin(LABEL_ATTACKS)]
    assert {"label_auc_mean", "label_accuracy", "label_chance_auc", "label_chance_accuracy"} <= set(label_rows["metric"])
    assert set(label_rows["headline_metric"]) == {"label_auc_mean", "label_accuracy"}
    assert len(label_rows[label_rows["metric"] == "label_chance_auc"]) == 4
    assert get_profile("smoke").targets in set(label_rows.loc[label_rows["metric"] == "label_targets", "value"])


def test_the_ssim_worst_case_and_the_leaderboard_never_name_a_label_attack(results):
    table = results.table()
    ssim = worst_case(table, ["ssim"])
    assert len(ssim) == len(DEFENSES) and set(ssim["attack"]) == {"decoder"}
    per_seed = seed_worst_cases(table)
    assert set(per_seed.loc[per_seed["metric"] == "ssim", "attack"]) == {"decoder"}
    assert not set(per_seed.loc[per_seed["metric"].str.startswith("label_"), "attack"]) - set(LABEL_ATTACKS)
    board = leaderboard(table, attack="decoder")
    assert not board.empty and not any(str(a) in LABEL_ATTACKS for a in board.get("worst_attack", []))


def test_report_verify_and_site_build_from_the_grid(capsys, results, tmp_path):
    root = str(results.root)
    code, out, err = run_cli(capsys, ["report", "--results", root])
    assert code == 0, err
    code, _, err = run_cli(capsys, ["verify", "--results", root])
    assert code == 0, err
    code, _, err = run_cli(capsys, ["site", "--results", root, "--out", str(tmp_path / "site")])
    assert code == 0, err
    entries = [json.loads(p.read_text()) for p in (tmp_path / "site" / "entries").glob("*.json")]
    assert len(entries) == len(DEFENSES)
    for entry in entries:  # each metric's worst case: SSIM's by the image attack, a label metric's by a label attack
        worst = entry["worst_case"]
        assert worst["ssim"]["attack"] == "decoder"
        assert {worst[m]["attack"] for m in ("label_auc_mean", "label_accuracy")} <= set(LABEL_ATTACKS)
