"""Reports at each attack's measured budget: the cells read, the convergence judged, the headers and notes."""
import dataclasses

import numpy as np
import pandas as pd
import pytest

from attacks import ATTACKS
from attacks.budget_table import measured_budget
from bench.attack_knobs import MEASURED
from bench.report.aggregate import at_default_settings
from bench.report.budgets import budget_notes, parse_attack_budget, parts_at
from bench.report.convergence import judge_at
from bench.report.tables import TABLES, build_table
from bench.report.verdicts import CONVERGED, NOT_CONVERGED
from bench.run.derived import add_derived_metrics
from bench.run.store import OK, CellRecord, records_to_table
from tests.bench.report import synthetic

SETTING = {"profile": "cpu", "dataset": "mnist", "victim": "mnistnet", "cut": "split-2"}  # synthetic's cells, on cpu


def budget_of(attack: str) -> float:
    return measured_budget(ATTACKS.get(attack), name=attack, **SETTING)


UNSPLIT = budget_of("unsplit")
STUDY = {"raw": (0.10, 0.11, 0.12), "ls8": (0.20, 0.21, 0.22)}  # UnSplit's headline (min-max MSE) at its measured budget
LARGER = {"raw": (0.06, 0.11, 0.12), "ls8": (0.20, 0.21, 0.22)}  # at 4x that: raw seed 0 still gains 0.04 (> 5%)


def unsplit_at(budget: float, values: dict[str, tuple[float, ...]]) -> list[CellRecord]:
    out = []
    for key, per_seed in values.items():
        for seed, value in zip(synthetic.SEEDS, per_seed):
            cell = dataclasses.replace(synthetic.cell(key, seed, "unsplit", "cpu"), attack_knobs={"budget": budget})
            metrics = {"accuracy": synthetic.ACCURACY[key][seed], "masked_mse_minmax": value, "ssim": 0.3, "diverged": 0.0}
            out.append(CellRecord(cell, OK, metrics=metrics))
    return out


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    """The synthetic cpu table (every attack at x1) plus UnSplit on raw and LS-F CR 8 at its measured
    budget and at 4x it."""
    records = [*synthetic.records("cpu"), *unsplit_at(UNSPLIT, STUDY), *unsplit_at(4 * UNSPLIT, LARGER)]
    tidy = add_derived_metrics(records_to_table(records))
    tidy.loc[(tidy["attack"] != "none") & tidy["attack_budget"].isna(), "attack_budget"] = 1.0
    return tidy


def test_the_synthetic_setting_has_a_measured_budget_above_one_for_unsplit():
    assert UNSPLIT > 1 and budget_of("decoder-ref") == 1.0  # else the tests below compare nothing


@pytest.mark.parametrize("given,expected", [("measured", MEASURED), (" Measured ", MEASURED), ("4", 4.0), (0.5, 0.5)])
def test_parse_accepts_a_positive_number_or_measured(given, expected):
    assert parse_attack_budget(given) == expected


@pytest.mark.parametrize("given", ["0", "-1", "nan", "inf", "x", None])
def test_parse_refuses_anything_else_in_one_line(given):
    with pytest.raises(ValueError, match="positive number or 'measured'"):
        parse_attack_budget(given)


def test_measured_reads_each_attack_at_its_own_budget_and_keeps_the_victims(table):
    kept = at_default_settings(table, budget=MEASURED)
    attacks = kept[kept["attack"] != "none"]
    budgets = attacks.groupby("attack")["attack_budget"].agg(lambda b: sorted(set(b.astype(float))))
    assert budgets["unsplit"] == [UNSPLIT] and budgets["decoder-ref"] == [1.0]
    assert set(attacks.loc[attacks["attack"] == "unsplit", "defense"]) == {"raw", "lightsplit-f"}  # CR 16 has none at UNSPLIT
    assert (kept["attack"] == "none").sum() == (table["attack"] == "none").sum()


def test_measured_keeps_the_tables_row_order_with_a_repeated_index(table):
    single = at_default_settings(table, budget=MEASURED)
    pd.testing.assert_frame_equal(at_default_settings(pd.concat([table, table]), budget=MEASURED),
                                  pd.concat([single, single]))


def test_measured_judges_each_attack_against_four_times_its_own_budget(table):
    judged = judge_at(table, by=["defense", "cr"], budget=MEASURED)
    unsplit = judged[judged["attack"] == "unsplit"].set_index("defense")["convergence"]
    assert unsplit["raw"].budget == UNSPLIT and unsplit["raw"].larger == 4 * UNSPLIT
    assert unsplit["raw"].verdict == NOT_CONVERGED and unsplit["lightsplit-f"].verdict == CONVERGED
    assert set(judged.loc[judged["attack"] == "decoder-ref", "budget"]) == {1.0}


def test_a_table_at_measured_budgets_names_each_budget_and_reads_its_cells(table):
    built = build_table(table, TABLES["II"], attack_budget=MEASURED)
    labels = list(built.body.columns)
    assert any(label.startswith(f"UnSplit ×{UNSPLIT:g}:") for label in labels)
    assert any(label.startswith("FORA ref. decoder ×1:") for label in labels)
    assert "each attack at its measured budget" in built.caption
    column = [label for label in labels if label.startswith(f"UnSplit ×{UNSPLIT:g}: masked MSE (min-max)")][0]
    raw = built.body[built.body["Defense"] == "Raw"].iloc[0]
    assert raw[column].startswith(f"{np.mean(STUDY['raw']):.4f}") and raw[column].endswith("†")  # not converged: raw seed 0
    assert any("its measured budget" in note for note in built.notes)


def test_a_column_missing_at_one_budget_says_where_its_cells_are():
    cells = [r for r in synthetic.records("cpu") if r.cell.attack != "unsplit"] + unsplit_at(UNSPLIT, STUDY)
    tidy = records_to_table(cells)
    tidy.loc[(tidy["attack"] != "none") & tidy["attack_budget"].isna(), "attack_budget"] = 1.0
    missing = " ".join(build_table(tidy, TABLES["II"]).missing)
    assert f"stored at ×{UNSPLIT:g}" in missing and "'measured'" in missing


def test_an_attack_without_a_measured_budget_is_read_at_one_and_the_note_says_so():
    other = {**SETTING, "dataset": "no-such-dataset"}
    rows = pd.DataFrame([{"attack": "unsplit", **other, "attack_budget": 1.0},
                         {"attack": "unsplit", **SETTING, "attack_budget": UNSPLIT}])
    assert sorted(b for b, _ in parts_at(rows, MEASURED)) == [1.0, UNSPLIT]
    (note,) = budget_notes(rows)
    assert "unsplit ×1 on cpu no-such-dataset mnistnet/split-2: no measured budget" in note


def test_the_note_under_a_measured_table_cites_each_attacks_budget_table(table):
    (entry,) = [e for e in ATTACKS.get("unsplit").budget_table if (e.profile, e.dataset, e.victim, e.cut)
                == tuple(SETTING.values())]
    notes = build_table(table, TABLES["II"], attack_budget=MEASURED).notes
    (note,) = [n for n in notes if n.startswith("Measured budgets")]
    assert f"unsplit ×{entry.budget:g} on cpu mnist mnistnet/split-2: {entry.verdict} ({entry.evidence})" in note
    assert "decoder-ref ×1 on cpu mnist mnistnet/split-2:" in note
    assert not any(n.startswith("Measured budgets") for n in build_table(table, TABLES["II"]).notes)
