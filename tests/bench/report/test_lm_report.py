"""The language-modelling table and Fig. 9's analogue, from hand-made results with known ratios."""
import pandas as pd
import pytest

from bench.report.lm_figure import fig9_perplexity_inflation
from bench.report.tables import TABLES, build_table
from bench.run.cell import Cell
from bench.run.derived import add_derived_metrics
from bench.run.store import OK, CellRecord, records_to_table

RAW = {"cpu-s": (100.0, 110.0, 120.0), "cpu-m": (90.0, 95.0, 100.0)}
INFLATION = {("cpu-s", 8.0): 1.1, ("cpu-s", 32.0): 1.3, ("cpu-m", 8.0): 1.05, ("cpu-m", 32.0): 1.2}


def _records() -> list[CellRecord]:
    out = []
    for cut, raw in RAW.items():
        for seed, value in enumerate(raw):
            cells = [(Cell(dataset="wikitext-2", victim="gpt2", cut=cut, defense="raw", profile="cpu", seed=seed), value)]
            cells += [(Cell(dataset="wikitext-2", victim="gpt2", cut=cut, defense="lightsplit-f", profile="cpu", seed=seed,
                            defense_knobs={"cr": cr}), value * INFLATION[(cut, cr)]) for cr in (8.0, 32.0)]
            out += [CellRecord(cell, OK, metrics={"best_val_perplexity": ppl}) for cell, ppl in cells]
    return out


@pytest.fixture
def table() -> pd.DataFrame:
    return add_derived_metrics(records_to_table(_records()))


def test_inflation_is_the_ratio_to_the_matched_raw_run(table):
    inflation = table[table.metric == "perplexity_inflation"]
    for row in inflation.itertuples():
        expected = 1.0 if row.defense == "raw" else INFLATION[(row.cut, row.cr)]
        assert row.value == pytest.approx(expected)


def test_lm_table_shows_perplexity_and_inflation_per_size_and_cr(table):
    built = build_table(table, TABLES["LM"])
    body = built.body
    assert list(body.columns)[-2:] == ["best perplexity", "inflation (× Raw)"]
    rows = {(r["Cut"], r["Defense"], r["CR"]): r for r in body.to_dict("records")}
    assert rows[("cpu-s", "Raw", "")]["best perplexity"].startswith("110.0 ± ")
    # every seed inflates by exactly 1.1: the CI half-width is 0
    assert rows[("cpu-s", "LightSplit-F", "8×")]["inflation (× Raw)"] == "1.100 ± 0.000"
    assert rows[("cpu-m", "LightSplit-F", "32×")]["inflation (× Raw)"] == "1.200 ± 0.000"


def test_fig9_is_written_and_skipped_without_defended_cells(table, tmp_path):
    written = fig9_perplexity_inflation(table, tmp_path)
    assert {p.name for p in written} == {"fig9_perplexity_inflation.png", "fig9_perplexity_inflation.pdf"}
    messages = []
    assert fig9_perplexity_inflation(table[table.defense == "raw"], tmp_path / "none", on_skip=messages.append) == []
    assert messages == ["fig 9 skipped: no stored perplexity inflation of a defended cell"]
