"""``bench verify --integrity`` on leaderboard entries: every record an entry names must exist with its sha256."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.cli.runner import run_cli


@pytest.fixture
def copies(grid, site, tmp_path) -> tuple[Path, Path]:
    """A copy of the grid and a copy of its site whose entries name the copied records."""
    grid_copy = Path(shutil.copytree(grid, tmp_path / "grid", ignore=shutil.ignore_patterns("checkpoints")))
    site_copy = Path(shutil.copytree(site, tmp_path / "site"))
    for path in (site_copy / "entries").glob("*.json"):
        path.write_text(path.read_text().replace(json.dumps(str(grid)), json.dumps(str(grid_copy))))
    return grid_copy, site_copy


def verify(capsys, grid: Path, *entries: str) -> tuple[int, list[str]]:
    args = ["verify", "--integrity", "--results", str(grid)] + [a for e in entries for a in ("--entries", e)]
    code, out, err = run_cli(capsys, args)
    return code, out.splitlines() + err.splitlines()


def test_intact_entries_pass(capsys, copies):
    grid, site = copies
    for entries in (str(site), str(site / "entries")):  # a site or its entries folder
        code, lines = verify(capsys, grid, entries)
        assert code == 0, lines
        assert lines[-1] == "2 entries naming 9 records: every record present and matching its sha256"


def _edit_first_record(grid, *, fresh_checksum: bool):
    """Change the first stored record's accuracy; with ``fresh_checksum`` it still passes its own check."""
    from bench.run.record import content_checksum

    record = sorted((grid / "cells").glob("*.json"))[0]
    data = json.loads(record.read_text())
    data["metrics"]["accuracy"] = 0.999
    if fresh_checksum:
        data["checksum"] = content_checksum(data)
    record.write_text(json.dumps(data, indent=1, sort_keys=True))
    return record


def test_an_edited_record_is_named_and_fails(capsys, copies):
    grid, site = copies
    record = _edit_first_record(grid, fresh_checksum=False)
    code, lines = verify(capsys, grid, str(site))
    assert code == 1
    changed = [line for line in lines if line.startswith(f"changed: {record} does not match the sha256 its entry holds")]
    assert len(changed) == 1 and "(named by " in changed[0]
    assert lines[-1] == "2 entries naming 9 records: 1 problems"


def test_a_record_rewritten_with_a_fresh_checksum_still_fails_against_its_entry(capsys, copies):
    grid, site = copies
    record = _edit_first_record(grid, fresh_checksum=True)
    code, lines = verify(capsys, grid, str(site))
    assert code == 1
    assert lines[0].startswith("9 records: 9 match their checksum")
    assert any(line.startswith(f"changed: {record}") for line in lines)


def test_a_missing_record_is_named_and_fails(capsys, copies, tmp_path):
    grid, site = copies
    record = sorted((grid / "cells").glob("*.json"))[0]
    record.unlink()
    code, lines = verify(capsys, grid, str(site))
    assert code == 1
    assert any(line.startswith(f"missing: record {record.stem} is not at {record}") for line in lines)


def test_records_are_found_under_a_moved_results_folder(capsys, copies, tmp_path):
    grid, site = copies
    moved = Path(shutil.move(grid, tmp_path / "moved"))
    code, lines = verify(capsys, moved, str(site))
    assert code == 0, lines


def test_an_invalid_entry_is_named(capsys, copies):
    grid, site = copies
    entry = sorted((site / "entries").glob("*.json"))[0]
    data = json.loads(entry.read_text())
    del data["records"]
    entry.write_text(json.dumps(data))
    (site / "entries" / "garbage.json").write_text("{not json")
    code, lines = verify(capsys, grid, str(site))
    assert code == 1
    assert any(line.startswith(f"invalid entry: {entry} does not follow the entry schema") for line in lines)
    assert any(line.startswith(f"unreadable entry: {site / 'entries' / 'garbage.json'}") for line in lines)


def test_site_entries_in_the_working_folder_are_checked_by_default(capsys, copies, tmp_path, monkeypatch):
    grid, site = copies
    monkeypatch.chdir(site.parent)  # ./site/entries
    code, lines = verify(capsys, grid)
    assert code == 0 and lines[-1].startswith("2 entries naming 9 records")


def test_entries_without_integrity_is_a_usage_error(capsys, copies):
    grid, site = copies
    code, out, err = run_cli(capsys, ["verify", "--results", str(grid), "--entries", str(site)])
    assert code == 2 and out == "" and err == "error: --entries applies to --integrity only\n"


def test_checking_entries_does_not_import_torch(copies):
    from tests.bench.cli.test_startup import PROBE

    grid, site = copies
    args = ["verify", "--integrity", "--results", str(grid), "--entries", str(site)]
    out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.rstrip().endswith("LOADED:"), out.stdout[-300:]
