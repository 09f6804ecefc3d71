"""``bench run`` on a damaged or busy results folder: every damage ends with every cell ok, a busy
folder with one line and exit 2."""
import json
import os
import subprocess
import sys

import pytest

from tests.bench.cli.runner import copy_of, run_cli, stored_folder

RUN = ["run", "--dataset", "digits", "--profile", "smoke", "--quiet", "--no-download", "--defense", "raw", "--seeds", "0"]
ATTACK = RUN + ["--attack", "decoder-ref"]


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A smoke grid of one attack cell, run once (tests copy it)."""
    return stored_folder(tmp_path_factory, ATTACK)


@pytest.fixture
def out(stored, tmp_path):
    return copy_of(stored, tmp_path)


def _record(out):
    (path,) = (out / "cells").glob("*.json")
    return path


def _rerun(capsys, out) -> tuple[str, str]:
    code, stdout, stderr = run_cli(capsys, ATTACK + ["--out", str(out)])
    assert code == 0, stderr
    assert "Traceback" not in stdout + stderr
    assert json.loads(_record(out).read_text())["status"] == "ok"
    assert not (out / ".lock").exists()
    return stdout, stderr


@pytest.mark.parametrize("text", ['{"metrics": {"accu', '{"garbage": true}'])
def test_a_damaged_record_is_moved_aside_and_its_cell_runs_again(capsys, out, text):
    record = _record(out)
    record.write_text(text)
    stdout, stderr = _rerun(capsys, out)
    assert "1 cells run, 0 already stored, 0 failed" in stdout
    (line,) = stderr.strip().splitlines()
    assert line.startswith(f"warning: cell record {record} is unreadable") and "moved to" in line
    (kept,) = (out / "cells" / "quarantine").glob("*.json")
    assert kept.read_text() == text


@pytest.mark.parametrize("damage", ["truncate", "tamper"])
def test_a_damaged_checkpoint_is_discarded_and_the_victim_trained_again(capsys, out, damage):
    import torch

    (checkpoint,) = (out / "checkpoints").glob("*.pt")
    if damage == "truncate":
        os.truncate(checkpoint, checkpoint.stat().st_size // 3)
    else:
        saved = torch.load(checkpoint, weights_only=True)
        name = next(iter(saved["state"]))
        saved["state"][name] = saved["state"][name] * 0.5
        torch.save(saved, checkpoint)
    _record(out).unlink()  # the attack cell must run again on the cached victim
    stdout, stderr = _rerun(capsys, out)
    assert "1 cells run" in stdout
    (line,) = stderr.strip().splitlines()
    assert line.startswith(f"warning: checkpoint {checkpoint} is unusable") and "trains again" in line
    assert torch.load(checkpoint, weights_only=True)["checksum"]  # cached again, whole


HOLD = """
import sys
from bench.run.store import ResultStore
lock = ResultStore(sys.argv[1]).lock()
lock.__enter__()
print("locked", flush=True)
sys.stdin.read()
"""

CLI = "import sys; from bench.cli import main; main(sys.argv[1:], prog_name='bench')"


def _listing(folder) -> dict:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def test_a_second_run_on_a_busy_folder_stops_at_once_and_writes_nothing(capsys, out):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        _record(out).write_text("{")  # damage a busy folder must not touch
        before = _listing(out)
        code, stdout, stderr = run_cli(capsys, ATTACK + ["--out", str(out)])
        assert code == 2 and stdout == ""
        assert stderr == f"error: another bench run is using {out} (pid {holder.pid})\n"
        assert _listing(out) == before
    finally:
        holder.stdin.close()
        holder.wait()
    _record(out).write_text(json.dumps({"garbage": True}))
    _rerun(capsys, out)  # once the holder has gone, the run goes on


def test_a_real_second_bench_process_is_refused_while_a_run_holds_the_folder(capsys, tmp_path, monkeypatch):
    """The in-process run holds the lock while its cell runs; a ``bench run`` started then stops."""
    import bench.run.cell_runner as cell_runner

    out, seen = tmp_path / "out", {}
    real = cell_runner.run_cell

    def run_cell_with_a_rival(cell, ctx):
        rival = subprocess.run([sys.executable, "-c", CLI, *RUN, "--out", str(out)], capture_output=True, text=True, timeout=120)
        seen.update(code=rival.returncode, out=rival.stdout, err=rival.stderr)
        return real(cell, ctx)

    monkeypatch.setattr(cell_runner, "run_cell", run_cell_with_a_rival)
    code, stdout, stderr = run_cli(capsys, RUN + ["--out", str(out)])
    assert code == 0 and "1 cells run" in stdout, stderr
    assert seen["code"] == 2 and seen["out"] == ""
    assert seen["err"] == f"error: another bench run is using {out} (pid {os.getpid()})\n"
    (record,) = (out / "cells").glob("*.json")
    assert json.loads(record.read_text())["status"] == "ok"


def test_compare_on_a_busy_folder_stops_at_once_too(capsys, tmp_path):
    out = tmp_path / "cmp"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        args = ["compare", "--defense", "raw", "--profile", "smoke", "--seeds", "0", "--cr", "8", "--dataset", "digits",
                "--quiet", "--baseline-results", str(tmp_path / "none"), "--out", str(out)]
        code, stdout, stderr = run_cli(capsys, args)
        assert code == 2 and stdout == ""
        assert stderr == f"error: another bench run is using {out} (pid {holder.pid})\n"
        assert os.listdir(out) == [".lock"]
    finally:
        holder.stdin.close()
        holder.wait()
