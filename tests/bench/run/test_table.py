import pandas as pd
import pytest

from bench.report.aggregate import aggregate
from bench.run.cell import Cell
from bench.run.store import OK, CellRecord
from bench.run.table import records_to_table, with_tuning_knob_defaults


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
