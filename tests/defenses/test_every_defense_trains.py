"""Every registered defense (and a DP composition) trains end to end in the smoke profile."""
import math

import pytest

from bench.run.cell import Cell
from bench.run.cell_runner import RunContext
from bench.run.runner import run_grid
from bench.run.store import ResultStore
from defenses import DEFENSES, PAYLOAD_TRANSFORMS, knobs_of

KNOB_VALUES = {"cr": 8.0, "sigma": 0.02, "tile": 2, "width": 64}
NAMES = DEFENSES.names() + PAYLOAD_TRANSFORMS.names() + ["lightsplit-f+dp", "topk+dp"]


@pytest.mark.parametrize("defense", NAMES)
def test_defense_runs_in_smoke_profile(defense, tmp_path):
    params = {k.name: KNOB_VALUES[k.name] for k in knobs_of(defense)}
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense=defense, profile="smoke",
                seed=0, lambda_wcc=1e-3, defense_knobs=params)
    store = ResultStore(tmp_path)
    summary = run_grid([cell], store=store, ctx=RunContext(data_root=tmp_path))
    record = store.load(cell)
    assert summary.failed == [], record.error
    assert 0.0 <= record.metrics["accuracy"] <= 1.0
    expected_cr = 1.0 if "cr" not in params else 8.0
    assert math.isclose(record.metrics["realized_cr"], expected_cr)
