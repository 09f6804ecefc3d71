import json
import os

import pytest

from bench.run.cell import Cell
from bench.run.cell_runner import RunContext
from bench.run.runner import run_grid
from bench.run.store import ResultStore

CELL = dict(dataset="digits", victim="mnistnet", cut="split-2", profile="smoke", seed=0)


def test_cell_id_is_stable_and_attack_does_not_change_the_victim_key():
    a = Cell(defense="raw", **CELL)
    b = Cell(defense="raw", attack="decoder", **CELL)
    assert a.id == Cell(defense="raw", **CELL).id and a.id != b.id
    assert a.victim_key == b.victim_key
    assert Cell(defense="lightsplit-f", defense_knobs={"cr": 8.0}, lambda_wcc=0.1, **CELL).matched_raw() == a


def test_a_failing_cell_is_recorded_with_its_traceback_and_the_grid_goes_on(tmp_path, monkeypatch):
    import bench.run.cell_runner as runner

    real = runner.run_cell

    def flaky(cell, ctx):
        if cell.defense == "topk":
            raise RuntimeError("boom in topk")
        return real(cell, ctx)

    monkeypatch.setattr(runner, "run_cell", flaky)
    cells = [Cell(defense="topk", defense_knobs={"cr": 8.0}, **CELL), Cell(defense="raw", **CELL)]
    store = ResultStore(tmp_path)
    summary = run_grid(cells, store=store, ctx=RunContext(data_root=tmp_path))
    assert summary.ran == 2 and summary.failed == [cells[0].id]
    failed = store.load(cells[0])
    assert failed.status == "failed" and "boom in topk" in failed.error and "Traceback" in failed.error
    assert store.load(cells[1]).status == "ok"
    table = store.table()
    assert set(table["status"]) == {"ok", "failed"}
    # failed cells are retried on the next run; ok cells are skipped
    summary = run_grid(cells, store=store, ctx=RunContext(data_root=tmp_path))
    assert summary.skipped == 1 and summary.ran == 1


def test_records_are_written_atomically(tmp_path, monkeypatch):
    import bench.run.store as store_module

    store = ResultStore(tmp_path)
    cell = Cell(defense="raw", **CELL)

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(store_module.os, "replace", broken_replace)
    with pytest.raises(OSError):
        store.write(store_module.CellRecord(cell, "ok", {"accuracy": 0.5}))
    assert not store.path_of(cell).exists()
    assert list(tmp_path.rglob("*.tmp")) == []


def test_same_seed_same_numbers(tmp_path):
    cells = [Cell(defense="lightsplit-f", defense_knobs={"cr": 8.0}, lambda_wcc=0.1, **CELL)]
    values = []
    for run in ("a", "b"):
        store = ResultStore(tmp_path / run)
        run_grid(cells, store=store, ctx=RunContext(data_root=tmp_path))
        metrics = json.loads(store.path_of(cells[0]).read_text())["metrics"]
        values.append({k: v for k, v in metrics.items() if k != "train_seconds"})
    assert values[0] == values[1]


def test_the_table_is_rewritten_only_when_a_record_is_newer(tmp_path):
    cells = [Cell(defense="raw", **CELL)]
    store = ResultStore(tmp_path)
    run_grid(cells, store=store, ctx=RunContext(data_root=tmp_path))
    assert store.table_is_current()
    parquet = tmp_path / "results.parquet"
    written = parquet.stat().st_mtime_ns
    run_grid(cells, store=store, ctx=RunContext(data_root=tmp_path))  # all stored: nothing to rewrite
    assert parquet.stat().st_mtime_ns == written
    # a record added by hand (a copied cell) makes the table stale, and the next run rewrites it
    copied = Cell(defense="raw", **{**CELL, "seed": 1})
    record = json.loads(store.path_of(cells[0]).read_text())
    record["cell"] = copied.as_dict()
    store.cells_dir.joinpath(f"{copied.id}.json").write_text(json.dumps(record))
    assert not store.table_is_current()
    run_grid(cells, store=store, ctx=RunContext(data_root=tmp_path))
    assert store.table_is_current() and set(store.table()["seed"]) == {0, 1}
    store.path_of(copied).unlink()  # a record removed by hand also makes the table stale
    assert not store.table_is_current()


def test_a_clone_holding_only_the_parquet_reads_it_and_a_newer_record_makes_it_stale(tmp_path):
    """A git clone has ``results.parquet`` (committed) but no ``results.csv`` (ignored): the parquet is
    what readers use, until a record is newer than it."""
    store = ResultStore(tmp_path)
    run_grid([Cell(defense="raw", **CELL)], store=store, ctx=RunContext(data_root=tmp_path))
    parquet, record = tmp_path / "results.parquet", next(store.cells_dir.glob("*.json"))
    earlier, later = (parquet.stat().st_mtime_ns + shift for shift in (-10**9, 10**9))
    for path in (record, store.cells_dir):
        os.utime(path, ns=(earlier, earlier))
    (tmp_path / "results.csv").unlink()
    assert store.current_table() == parquet and not store.table_is_current()
    os.utime(record, ns=(later, later))
    assert store.current_table() is None
