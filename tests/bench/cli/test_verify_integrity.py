"""``bench verify --integrity``: records changed after they were written, and records from before
checksums existed."""
import json
import shutil
from pathlib import Path

import pytest

from bench.cli import main
from tests.bench.cli.runner import run_cli

COMMITTED = Path(__file__).resolve().parents[3] / "results" / "issue2-utility"


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """Two smoke cells, run once (tests copy them)."""
    out = tmp_path_factory.mktemp("stored") / "out"
    args = ["run", "--dataset", "digits", "--profile", "smoke", "--quiet", "--no-download", "--defense", "raw",
            "--seeds", "0,1", "--out", str(out)]
    try:
        main.main(args, prog_name="bench")
    except SystemExit as exc:
        assert exc.code == 0
    return out


@pytest.fixture
def out(stored, tmp_path):
    return Path(shutil.copytree(stored, tmp_path / "out"))


def _records(out):
    return sorted((out / "cells").glob("*.json"))


def test_intact_records_pass(capsys, out):
    code, stdout, stderr = run_cli(capsys, ["verify", "--integrity", "--results", str(out)])
    assert code == 0 and stderr == ""
    assert stdout == "2 records: 2 match their checksum, 0 do not, 0 written before checksums existed (not checkable)\n"


def test_a_hand_edited_metric_is_named_and_fails(capsys, out):
    edited, other = _records(out)
    data = json.loads(edited.read_text())
    data["metrics"]["accuracy"] = 0.999
    edited.write_text(json.dumps(data, indent=1, sort_keys=True))
    code, stdout, stderr = run_cli(capsys, ["verify", "--integrity", "--results", str(out)])
    assert code == 1 and stderr == ""
    lines = stdout.strip().splitlines()
    assert lines[0] == f"changed: {edited} does not match its checksum (edited after it was written)"
    assert lines[1].startswith("2 records: 1 match their checksum, 1 do not") and len(lines) == 2
    assert edited.exists() and json.loads(edited.read_text())["metrics"]["accuracy"] == 0.999  # reported, not moved


def test_records_from_before_checksums_are_counted_and_pass(capsys, out):
    old, _ = _records(out)
    data = json.loads(old.read_text())
    del data["checksum"]
    old.write_text(json.dumps(data, indent=1, sort_keys=True))
    code, stdout, _ = run_cli(capsys, ["verify", "--integrity", "--results", str(out)])
    assert code == 0
    assert stdout == "2 records: 1 match their checksum, 0 do not, 1 written before checksums existed (not checkable)\n"


def test_committed_results_predate_checksums_and_are_left_as_they_are(capsys):
    before = {p: p.stat().st_mtime_ns for p in COMMITTED.rglob("*")}
    code, stdout, stderr = run_cli(capsys, ["verify", "--integrity", "--results", str(COMMITTED)])
    assert code == 0 and stderr == ""
    n = len(list((COMMITTED / "cells").glob("*.json")))
    assert stdout == f"{n} records: 0 match their checksum, 0 do not, {n} written before checksums existed (not checkable)\n"
    assert {p: p.stat().st_mtime_ns for p in COMMITTED.rglob("*")} == before


def test_folders_are_checked_together_and_unreadable_records_fail(capsys, out, tmp_path):
    second = Path(shutil.copytree(out, tmp_path / "second"))
    broken = _records(second)[0]
    broken.write_text('{"garbage": true}')
    code, stdout, stderr = run_cli(capsys, ["verify", "--integrity", "--results", str(out), "--results", str(second)])
    assert code == 1
    assert stdout.strip().endswith("3 records: 3 match their checksum, 0 do not, 0 written before checksums existed "
                                   "(not checkable); 1 unreadable, moved aside")
    (line,) = stderr.strip().splitlines()
    assert line.startswith(f"warning: cell record {broken} is unreadable")


def test_integrity_needs_records_and_takes_no_profile(capsys, out, tmp_path):
    code, _, stderr = run_cli(capsys, ["verify", "--integrity", "--results", str(tmp_path / "empty")])
    assert code == 2 and stderr.startswith("error: no stored results under")
    code, _, stderr = run_cli(capsys, ["verify", "--integrity", "--profile", "smoke", "--results", str(out)])
    assert code == 2 and stderr == "error: --profile does not apply to --integrity\n"


def test_without_integrity_verify_still_checks_the_claims(capsys, out):
    code, stdout, _ = run_cli(capsys, ["verify", "--results", str(out)])
    assert code == 0 and stdout.strip().splitlines()[-1].endswith("(smoke profile)")
