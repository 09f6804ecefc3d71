"""Storage faults under ``bench run``: a folder that cannot be locked or written, a full disk. Each ends
in one line (the path, what is wrong, what became of the cells, what to do), exit 2 when nothing ran
and 1 after partial work, every stored record intact byte for byte, and no computed cell silently lost."""
import errno

import pytest

from bench.run.cell import Cell
from tests.bench.run.faults import failing_fsync, failing_open, one_error_line, records, run, temp_of

NEW = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=1)
READ_ONLY = PermissionError(errno.EACCES, "Permission denied")
FULL = OSError(errno.ENOSPC, "No space left on device")


def test_a_folder_that_cannot_be_locked_is_one_line_exit_2(capsys, out, monkeypatch):
    before = records(out)
    failing_open(monkeypatch, lambda path: path == out / ".lock", READ_ONLY)
    code, stdout, stderr = run(capsys, out, "--seeds", "0,1")
    line = one_error_line(stderr)
    assert code == 2 and stdout == ""
    assert line == (f"error: cannot write {out / '.lock'} (Permission denied): nothing ran and no stored cell was "
                    f"touched; make {out} writable (or pass another --out), then rerun the same command")
    assert records(out) == before


def test_a_new_folder_that_cannot_be_made_is_one_line_exit_2(capsys, tmp_path, monkeypatch):
    from pathlib import Path

    real_mkdir = Path.mkdir

    def mkdir(self, *args, **kwargs):
        if self == tmp_path / "new":
            raise PermissionError(errno.EROFS, "Read-only file system")
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    code, _, stderr = run(capsys, tmp_path / "new")
    line = one_error_line(stderr)
    assert code == 2 and line.startswith(f"error: cannot write {tmp_path / 'new'} (Read-only file system): nothing ran")
    assert f"make {tmp_path} writable" in line and not (tmp_path / "new").exists()


@pytest.mark.parametrize("fault,what", [(READ_ONLY, "Permission denied"), (FULL, "No space left on device")])
def test_cells_that_cannot_take_a_record_are_found_before_any_cell_runs(capsys, out, monkeypatch, fault, what):
    before = records(out)
    if fault is READ_ONLY:
        failing_open(monkeypatch, lambda path: path.parent == out / "cells", fault)
    else:
        failing_fsync(monkeypatch, lambda path: path.parent == out / "cells", fault)
    code, stdout, stderr = run(capsys, out, "--seeds", "0,1")
    line = one_error_line(stderr)
    assert code == 2 and stdout == ""
    assert line.startswith(f"error: cannot write {out / 'cells'} ({what}): nothing ran and no stored cell was touched; ")
    assert records(out) == before and not list((out / "cells").glob(".*"))  # no probe or temporary file left


def test_a_record_that_cannot_be_written_is_kept_and_stored_by_the_next_run(capsys, out, monkeypatch):
    before = records(out)
    failing_open(monkeypatch, lambda path: path.parent == out / "cells" and temp_of(NEW.id)(path), READ_ONLY)
    code, stdout, stderr = run(capsys, out, "--seeds", "0,1")
    line = one_error_line(stderr)
    kept = out / "recovered" / f"{NEW.id}.json"
    assert code == 1 and stdout == ""
    assert line.startswith(f"error: cannot write {out / 'cells' / (NEW.id + '.json')} (Permission denied): the cell "
                           f"just computed is kept in {kept} and stored by the next run; 0 other cells stored by this "
                           "run, no stored cell was touched; make")
    assert records(out) == before and kept.is_file()
    computed = kept.read_bytes()
    monkeypatch.undo()
    code, stdout, stderr = run(capsys, out, "--seeds", "0,1")
    assert code == 0 and "0 cells run, 2 already stored" in stdout  # read back, not computed again
    assert stderr.strip() == f"warning: 1 cell record kept in {out / 'recovered'} after a failed write is now stored in {out / 'cells'}"
    assert records(out) == {**before, f"{NEW.id}.json": computed} and not kept.exists()


def test_a_disk_that_fills_mid_run_loses_no_stored_cell_and_the_cell_runs_again(capsys, out, monkeypatch):
    before = records(out)
    failing_fsync(monkeypatch, temp_of(NEW.id), FULL)  # cells/ and recovered/ alike: nowhere to keep it
    code, _, stderr = run(capsys, out, "--seeds", "0,1")
    line = one_error_line(stderr)
    assert code == 1
    assert line.startswith(f"error: cannot write {out / 'cells' / (NEW.id + '.json')} (No space left on device): the cell "
                           "just computed could not be kept and runs again next time; 0 other cells stored by this run, "
                           f"no stored cell was touched; free space on the disk of {out / 'cells'}")
    assert records(out) == before and not list(out.rglob(".*.tmp"))
    monkeypatch.undo()
    code, stdout, _ = run(capsys, out, "--seeds", "0,1")
    assert code == 0 and "1 cells run, 1 already stored" in stdout


def test_a_table_that_cannot_be_written_after_the_cells_ran_is_exit_1(capsys, out, monkeypatch):
    before = records(out)
    failing_open(monkeypatch, lambda path: path.parent == out and path.name.startswith(".results."), FULL)
    code, _, stderr = run(capsys, out, "--seeds", "0,1")
    line = one_error_line(stderr)
    assert code == 1
    assert line.startswith(f"error: cannot write {out / 'results.parquet'} (No space left on device): 1 cells run now "
                           "and every cell record is stored; only the collected table is out of date; free space")
    assert {name: data for name, data in records(out).items() if name in before} == before
    assert f"{NEW.id}.json" in records(out)


def test_checkpoints_that_cannot_be_written_are_one_warning_and_the_cells_are_stored(capsys, tmp_path, monkeypatch):
    from bench.run import training

    def full(path, **_):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(training, "save_checkpoint", full)
    monkeypatch.setattr(training, "_UNCACHED", set(), raising=False)  # a fresh process: nothing warned yet
    out = tmp_path / "out"
    code, stdout, stderr = run(capsys, out, "--seeds", "0,1")
    assert code == 0 and "2 cells run" in stdout and len(records(out)) == 2
    (line,) = stderr.strip().splitlines()  # one line for the folder, not one per victim
    assert line.startswith("warning: checkpoint ") and line.endswith(
        f"could not be written (No space left on device); victims are not cached in {out / 'checkpoints'} by this run "
        "(they train again next time)")
