"""Run a click group the way the console script does and capture what it printed."""
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
