"""Run a click group the way the console script does and capture what it printed."""
import shutil
from pathlib import Path

import click

from bench.cli import main


def run_cli(capsys, args: list[str], group: click.Group = main) -> tuple[int, str, str]:
    """Returns (exit code, stdout, stderr); the group exits itself on errors."""
    try:
        group.main(args, prog_name="bench")
        code = 0
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def stored_folder(tmp_path_factory, args: list[str]) -> Path:
    """A results folder made by ``bench`` with ``args`` (a ``run`` that must succeed), for tests that copy it."""
    out = tmp_path_factory.mktemp("stored") / "out"
    try:
        main.main([*args, "--out", str(out)], prog_name="bench")
    except SystemExit as exc:
        assert exc.code == 0
    return out


def copy_of(folder: Path, tmp_path: Path) -> Path:
    """A copy of ``folder`` under ``tmp_path`` to damage."""
    copy = tmp_path / "out"
    shutil.copytree(folder, copy)
    return copy
