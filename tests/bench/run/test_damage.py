"""Damaged result folders: records cut short or not records, checksums, the run lock."""
import json
import os
import subprocess
import sys

import pytest

from bench.run.cell import Cell
from bench.run.record import INTACT, MISMATCH, NO_CHECKSUM, CellRecord
from bench.run.store import ResultStore
from bench.run.store_lock import StoreBusyError

CELL = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=0)
OTHER = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=1)


def _stored(tmp_path) -> ResultStore:
    store = ResultStore(tmp_path)
    for cell in (CELL, OTHER):
        store.write(CellRecord(cell, "ok", {"accuracy": 0.5, "payload_values": 144}, provenance={"code_version": "x"}))
    return store


def _one_warning(err: str, path) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"warning: cell record {path} is unreadable"), err
    return lines[0]


@pytest.mark.parametrize(
    "damage,why",
    [
        (lambda text: text[: len(text) // 2], "not valid JSON"),
        (lambda text: "", "not valid JSON"),
        (lambda text: '{"garbage": true}', "not a cell record: no key 'cell'"),
        (lambda text: "[1, 2]", "not a cell record"),
        (lambda text: text.replace('"status": "ok"', '"status": 7'), "not a cell record: wrong status"),
        (lambda text: text.replace('"accuracy": 0.5', '"accuracy": "high"'), "not a cell record: wrong metrics"),
        (lambda text: text.replace('"dataset"', '"dataset_typo"'), "not a cell record: no cell"),
    ],
)
def test_a_damaged_record_is_moved_aside_with_one_warning_and_its_cell_is_not_done(tmp_path, capsys, damage, why):
    store = _stored(tmp_path)
    path = store.path_of(CELL)
    original = damage(path.read_text())
    path.write_text(original)
    assert not store.is_done(CELL)
    line = _one_warning(capsys.readouterr().err, path)
    assert why in line and "its cell counts as not stored" in line
    (kept,) = store.quarantine_dir.glob(f"{CELL.id}.*.json")
    assert kept.read_text() == original and str(kept) in line and not path.exists()
    assert store.is_done(OTHER) and capsys.readouterr().err == ""  # nothing else moved, no second warning


def test_records_and_the_table_skip_damaged_files_the_same_way(tmp_path, capsys):
    store = _stored(tmp_path)
    store.path_of(CELL).write_text('{"garbage": true}')
    (store.cells_dir / "notacell.json").write_bytes(b"\xff\xfe\x00garbage")
    table = store.table()
    assert set(table["cell_id"]) == {OTHER.id}
    assert len(capsys.readouterr().err.strip().splitlines()) == 2
    assert [r.cell for r in store.records()] == [OTHER] and capsys.readouterr().err == ""
    assert len(list(store.quarantine_dir.glob("*.json"))) == 2


def test_every_record_carries_the_checksum_of_its_content(tmp_path):
    store = _stored(tmp_path)
    assert [s.integrity for s in store.checked_records()] == [INTACT, INTACT]
    data = json.loads(store.path_of(CELL).read_text())
    assert len(data["checksum"]) == 64
    data["metrics"]["accuracy"] = 0.99  # a hand-edited number
    store.path_of(CELL).write_text(json.dumps(data, indent=1))
    data = json.loads(store.path_of(OTHER).read_text())
    del data["checksum"]  # as written before checksums existed
    store.path_of(OTHER).write_text(json.dumps(data))
    status = {s.record.cell: s.integrity for s in store.checked_records()}
    assert status == {CELL: MISMATCH, OTHER: NO_CHECKSUM}
    # neither is damage: both still count as stored, nothing is moved
    assert store.is_done(CELL) and store.is_done(OTHER) and not store.quarantine_dir.exists()
    assert store.load(CELL).metrics["accuracy"] == 0.99


def test_the_checksum_does_not_depend_on_layout(tmp_path):
    store = _stored(tmp_path)
    data = json.loads(store.path_of(CELL).read_text())
    store.path_of(CELL).write_text(json.dumps(dict(reversed(list(data.items())))))  # other order, no indent
    assert store.checked_records()[[s.record.cell for s in store.checked_records()].index(CELL)].integrity == INTACT


HOLD = """
import sys
from bench.run.store import ResultStore
lock = ResultStore(sys.argv[1]).lock()
lock.__enter__()
print("locked", flush=True)
sys.stdin.read()
"""


def _holder(folder) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "locked"
    return child


def test_the_lock_is_held_by_one_process_and_freed_when_it_dies(tmp_path):
    child = _holder(tmp_path)
    try:
        with pytest.raises(StoreBusyError, match=rf"^another bench run is using {tmp_path} \(pid {child.pid}\)$"):
            ResultStore(tmp_path).lock().__enter__()
    finally:
        child.kill()  # no clean-up runs: the operating system frees the lock
        child.wait()
    with ResultStore(tmp_path).lock():
        with pytest.raises(StoreBusyError):  # a second holder in this process is refused too
            ResultStore(tmp_path).lock().__enter__()
    with ResultStore(tmp_path).lock():
        pass
    assert os.listdir(tmp_path) == []  # the lock file goes with its last holder
