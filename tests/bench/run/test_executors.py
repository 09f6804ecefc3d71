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


def test_past_its_deadline_a_run_starts_no_cell_and_they_stay_to_run(tmp_path):
    import time

    store = ResultStore(tmp_path / "late")
    summary = run_grid(CELLS, store=store, ctx=RunContext(data_root=tmp_path, deadline=time.time() - 1))
    assert (summary.ran, summary.left) == (0, 3) and store.records() == []
    again = run_grid(CELLS[:1], store=store, ctx=RunContext(data_root=tmp_path))
    assert (again.ran, again.left) == (1, 0)


def test_a_deadline_lets_the_first_cell_of_a_kind_start_then_holds_back_what_would_overrun(tmp_path, monkeypatch):
    from bench.run import executors

    monkeypatch.setattr(executors, "_LONGEST", {})
    clock = iter([100.0, 100.0, 100.0])  # the deadline is 150: a kind seen taking 60 s cannot start at 100
    monkeypatch.setattr(executors.time, "time", lambda: next(clock))

    def fake_execute(cell, ctx):
        from bench.run.store import CellRecord

        record = CellRecord(cell, "ok", {"accuracy": 1.0})
        record.wall_seconds = 60.0
        return record

    monkeypatch.setattr(executors, "execute_cell", fake_execute)
    same_kind = [CELLS[0], CELLS[2]]  # raw and topk on the same data, victim, profile: one kind
    ran = list(executors.stream_group(same_kind, RunContext(data_root=tmp_path, deadline=150.0)))
    assert [r.cell for r in ran] == [CELLS[0]]
