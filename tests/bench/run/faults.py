"""Shared pieces of the fault-injection tests: a stored results folder to damage, its records' bytes,
and operating-system calls that fail for chosen paths (no root or real full disk needed)."""
from __future__ import annotations

import os
from pathlib import Path

from tests.bench.cli.runner import run_cli

SMOKE = ["--dataset", "digits", "--profile", "smoke", "--quiet", "--no-download"]
RUN = ["run", *SMOKE, "--defense", "raw"]


def records(out: Path) -> dict[str, bytes]:
    """Every stored record's bytes, by file name."""
    return {p.name: p.read_bytes() for p in sorted((out / "cells").glob("*.json"))}


def one_error_line(stderr: str) -> str:
    """The one line a fault prints (an ``error:`` line, no traceback)."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in stderr, stderr
    return lines[0]


def run(capsys, out: Path, *args: str) -> tuple[int, str, str]:
    return run_cli(capsys, [*RUN, "--out", str(out), *args])


def failing_open(monkeypatch, fails, err: OSError) -> None:
    """``os.open`` raises ``err`` for every path ``fails(path)`` accepts (``tempfile`` opens through it)."""
    real = os.open

    def fake(path, flags, mode=0o777, *, dir_fd=None):
        if fails(Path(os.fsdecode(path))):
            raise err
        return real(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", fake)


def failing_fsync(monkeypatch, fails, err: OSError) -> None:
    """``os.fsync`` raises ``err`` for every open file whose path ``fails(path)`` accepts: a disk that
    fills while a file is written."""
    real = os.fsync

    def fake(fd):
        if fails(Path(os.readlink(f"/proc/self/fd/{fd}"))):
            raise err
        return real(fd)

    monkeypatch.setattr(os, "fsync", fake)


def temp_of(cell_id: str):
    """Whether a path is a temporary file of the record of ``cell_id`` (in ``cells/`` or ``recovered/``)."""
    return lambda path: path.name.startswith(f".{cell_id}.json.")
