"""Every committed cell's id (and victim key) is recomputed from its stored record."""
import json
from pathlib import Path

import pytest

from bench.run.cell import Cell

RESULTS = Path(__file__).resolve().parents[3] / "results"
RECORDS = sorted(RESULTS.glob("*/cells/*.json"))


def test_there_are_committed_records_to_check():
    assert len(RECORDS) > 100


@pytest.mark.parametrize("folder", sorted({p.parent.parent.name for p in RECORDS}))
def test_committed_ids_recompute_from_their_records(folder):
    for path in sorted((RESULTS / folder / "cells").glob("*.json")):
        record = json.loads(path.read_text())
        cell = Cell.from_dict(record["cell"])
        assert cell.id == record["cell_id"] == path.stem, path
        assert cell.victim_key == record["victim_key"], path
        assert Cell.from_dict(cell.as_dict()) == cell


def test_a_knob_at_its_default_is_not_part_of_the_cell():
    from bench.run.grid import GridSpec, expand

    base = dict(datasets=("digits",), defenses=("lightsplit-f",), seeds=(0,), profile="smoke", attacks=("decoder-ref",))
    plain = {c.id for c in expand(GridSpec(**base, knobs={"cr": (8.0,)}))}
    at_default = {c.id for c in expand(GridSpec(**base, knobs={"cr": (8.0,), "budget": (1.0,)}))}
    doubled = expand(GridSpec(**base, knobs={"cr": (8.0,), "budget": (2.0,)}))
    assert plain == at_default and len(plain) == 2  # the cell and its matched raw cell
    assert not plain & {c.id for c in doubled}
    assert all(c.attack_params() == {"budget": 2.0} for c in doubled)
