import pandas as pd
import pytest

from bench.report.aggregate import aggregate
from bench.run.cell import Cell
from bench.run.record import attack_facts
from bench.run.store import OK, CellRecord
from bench.run.table import (
    NOT_FACTORS,
    attacks_reading,
    factor_columns,
    headline_metrics,
    records_to_table,
    with_attack_facts,
    with_tuning_knob_defaults,
)


def sdar_cell(seed: int, **attack_knobs) -> Cell:
    return Cell(dataset="mnist", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=seed,
                attack="sdar", attack_knobs=attack_knobs)


def record(cell: Cell, knobs: dict, ssim: float) -> CellRecord:
    return CellRecord(cell, OK, metrics={"ssim": ssim}, knobs={"defense": {}, "attack": knobs})


def test_cells_stored_before_a_tuning_knob_existed_join_the_cells_at_its_default():
    table = records_to_table([
        record(sdar_cell(0), {"budget": 1.0}, 0.30),  # before lambda1_scale was declared
        record(sdar_cell(1), {"budget": 1.0, "lambda1_scale": 1.0}, 0.40),
        record(sdar_cell(2, lambda1_scale=2.5), {"budget": 1.0, "lambda1_scale": 2.5}, 0.50),
        CellRecord(Cell(dataset="mnist", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=0,
                        attack="unsplit"), OK, metrics={"ssim": 0.2}, knobs={"defense": {}, "attack": {"budget": 1.0}}),
    ])
    assert table.set_index("attack").loc["sdar", "attack_lambda1_scale"].tolist() == [1.0, 1.0, 2.5]
    assert table.set_index("attack").loc[["unsplit"], "attack_lambda1_scale"].isna().all()  # it does not read it
    sdar = aggregate(table)
    sdar = sdar[(sdar["attack"] == "sdar") & (sdar["metric"] == "ssim")].set_index("attack_lambda1_scale")
    assert sdar.loc[1.0, "n"] == 2 and sdar.loc[1.0, "mean"] == pytest.approx(0.35)


def test_a_stored_table_gets_the_same_defaults_when_read():
    stored = pd.DataFrame({"attack": ["sdar", "sdar", "decoder-ref"], "attack_lambda1_scale": [None, 2.5, None],
                           "attack_precision": [None, None, "float32"]})
    filled = with_tuning_knob_defaults(stored)
    assert filled["attack_lambda1_scale"].tolist()[:2] == [1.0, 2.5] and pd.isna(filled["attack_lambda1_scale"][2])
    assert filled["attack_precision"].isna().tolist() == [True, True, False]  # SDAR does not read it
    assert stored["attack_lambda1_scale"].isna().sum() == 2  # the input is left as it was


def test_rows_carry_the_facts_their_records_stored_and_older_records_get_the_registrys():
    plugin = Cell(dataset="hapt", victim="har-mlp", cut="split-1", defense="raw", profile="smoke", seed=0, attack="mine")
    recorded = CellRecord(plugin, OK, metrics={"median_r2": 0.1}, threat_model="passive", attack_kinds=["tabular"],
                          headline_metric="median_r2")
    older = record(sdar_cell(0), {"budget": 1.0}, 0.3)  # written before any fact was recorded
    victim = CellRecord(Cell(dataset="mnist", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=0),
                        OK, metrics={"accuracy": 0.9}, **attack_facts("none"))
    table = records_to_table([CellRecord.from_json(r.to_json()) for r in (recorded, older, victim)])
    facts = table.set_index("attack")[["threat_model", "attack_kinds", "headline_metric"]]
    assert facts.loc["mine"].tolist() == ["passive", "tabular", "median_r2"]  # no registry needed
    assert facts.loc["sdar"].tolist() == ["cotrain", "image", "ssim"]
    assert facts.loc["none"].tolist()[0] == "none" and facts.loc["none"].isna().tolist()[1:] == [True, True]
    assert attacks_reading(table, "tabular") == {"mine"} and attacks_reading(table, "image") == {"sdar"}
    assert headline_metrics(table) == {"mine": "median_r2", "sdar": "ssim"}
    assert {"threat_model", "attack_kinds", "headline_metric"} <= NOT_FACTORS
    assert not {"threat_model", "attack_kinds", "headline_metric"} & set(factor_columns(table))


def test_a_table_stored_before_the_facts_were_recorded_gets_them_from_the_registry():
    stored = pd.DataFrame({"attack": ["unsplit", "none", "har-reid", "not-registered"]})
    filled = with_attack_facts(stored)
    assert filled["threat_model"].tolist() == ["passive", "none", "passive", "unknown"]
    assert filled["attack_kinds"].tolist()[::2] == ["image", "tabular"] and filled["attack_kinds"][[1, 3]].isna().all()
    assert filled["headline_metric"].tolist()[::2] == ["masked_mse_minmax", "reid_accuracy"]
    assert with_attack_facts(filled) is filled and list(stored.columns) == ["attack"]  # nothing refilled, input kept
