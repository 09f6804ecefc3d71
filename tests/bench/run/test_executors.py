"""Executors return the same records as the serial path; the driver alone writes them; resume works."""
import pytest

from bench.run.cell import Cell
from bench.run.cell_runner import RunContext
from bench.run.executors import LocalExecutor, RayExecutor, group_by_victim
from bench.run.runner import run_grid
from bench.run.store import ResultStore

BASE = dict(dataset="digits", victim="mnistnet", cut="split-2", profile="smoke")
CELLS = [Cell(defense="raw", seed=0, **BASE), Cell(defense="lightsplit-f", defense_knobs={"cr": 8.0}, seed=0, **BASE),
         Cell(defense="topk", defense_knobs={"cr": 8.0}, seed=1, **BASE)]


def metrics_of(store):
    return {r.cell.id: {k: v for k, v in r.metrics.items() if k != "train_seconds"} for r in store.records()}


def test_cells_sharing_a_victim_form_one_task():
    cells = [Cell(defense="raw", seed=0, attack=a, **BASE) for a in ("none", "decoder-ref", "unsplit")]
    assert group_by_victim(cells + CELLS[1:]) == [cells, [CELLS[1]], [CELLS[2]]]


def test_local_workers_match_the_serial_run_and_resume_skips_everything(tmp_path):
    serial = ResultStore(tmp_path / "serial")
    run_grid(CELLS, store=serial, ctx=RunContext(data_root=tmp_path))
    parallel = ResultStore(tmp_path / "parallel")
    summary = run_grid(CELLS, store=parallel, ctx=RunContext(data_root=tmp_path), executor=LocalExecutor(jobs=2))
    assert summary.ran == 3 and summary.failed == []
    assert metrics_of(parallel) == metrics_of(serial)
    again = run_grid(CELLS, store=parallel, ctx=RunContext(data_root=tmp_path), executor=LocalExecutor(jobs=2))
    assert again.ran == 0 and again.skipped == 3


def test_ray_on_a_local_instance(tmp_path):
    ray = pytest.importorskip("ray")
    store = ResultStore(tmp_path / "ray")
    try:
        executor = RayExecutor(init_kwargs={"num_cpus": 2, "include_dashboard": False})
        summary = run_grid(CELLS[:2], store=store, ctx=RunContext(data_root=tmp_path), executor=executor)
    finally:
        ray.shutdown()
    assert summary.ran == 2 and summary.failed == []
    serial = ResultStore(tmp_path / "serial")
    run_grid(CELLS[:2], store=serial, ctx=RunContext(data_root=tmp_path))
    assert metrics_of(store) == metrics_of(serial)
