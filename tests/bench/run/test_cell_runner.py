"""What every cell's record says beside its metrics: the chance rate and the wall time."""
import torch

from bench.run import cell_runner
from bench.run.cell import Cell
from bench.run.cell_runner import chance_metrics
from bench.run.progress import RESUMED_SECONDS
from bench.run.record import OK


def test_chance_is_the_majority_class_share():
    labels = torch.tensor([0, 0, 0, 1, 2, 2, 5, 5, 5, 5])
    assert chance_metrics(labels) == {"chance_accuracy": 0.4, "test_samples": 10.0}


def test_a_resumed_cells_wall_seconds_count_the_seconds_its_stopped_runs_spent(tmp_path, monkeypatch):
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", attack="sdar", seed=0)
    ctx = cell_runner.RunContext(data_root=tmp_path)
    monkeypatch.setattr(ctx, "source", lambda dataset: "fixture")
    monkeypatch.setattr(cell_runner, "run_cell", lambda cell, ctx: ({"attack_seconds": 5000.0, RESUMED_SECONDS: 4000.0}, {}))
    resumed = cell_runner.execute_cell(cell, ctx)
    monkeypatch.setattr(cell_runner, "run_cell", lambda cell, ctx: ({"attack_seconds": 5000.0}, {}))
    straight = cell_runner.execute_cell(cell, ctx)
    assert resumed.status == straight.status == OK
    assert 4000.0 <= resumed.wall_seconds < 4000.0 + 60 and straight.wall_seconds < 60
