"""The ``bench`` command line: one module per command (``run``, ``list``, ``report``, ``figures``,
``verify``, ``compare``, ``site``).

Every usage error prints one line, ``error: ...``, exits with status 2 and writes nothing. A results
folder that cannot be locked or written is one ``error: ...`` line too (:class:`bench.errors.StorageError`),
exit status 2 when nothing ran, 1 after part of the grid ran.
"""
from __future__ import annotations

import sys

import click

from bench.cli.common import plugin_option
from bench.errors import GridError, StorageError


class BenchGroup(click.Group):
    """A click group whose usage errors are one line and exit 2."""

    def main(self, *args, **kwargs):  # type: ignore[override]
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("aborted", err=True)
            sys.exit(130)
        except click.ClickException as exc:
            click.echo(f"error: {exc.format_message()}", err=True)
            sys.exit(2)
        except (GridError, FileNotFoundError) as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except StorageError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)


@click.group(cls=BenchGroup)
@plugin_option
def main() -> None:
    """A benchmark suite for privacy at the split-learning cut layer."""
    # Each command imports the registries it uses: `bench report` and `bench verify` never load torch.


def _register_commands() -> None:
    from bench.cli.compare import compare_command
    from bench.cli.list import list_command
    from bench.cli.report import figures_command, report_command
    from bench.cli.run import run_command
    from bench.cli.site import site_command
    from bench.cli.verify import verify_command

    for command in (list_command, run_command, report_command, figures_command, verify_command, compare_command, site_command):
        main.add_command(command)


_register_commands()
