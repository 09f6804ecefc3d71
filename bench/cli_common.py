"""Pieces shared by the ``bench`` commands: plugin loading, list options, running a grid with progress."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.grid import GridError, GridSpec, expand


def _load_plugins(ctx: click.Context, param: click.Parameter, paths: tuple[str, ...]) -> None:
    from bench.registry import load_plugin

    for path in paths:
        try:
            load_plugin(path)
        except FileNotFoundError as err:
            raise click.BadParameter(str(err), param_hint="--plugin") from None
        except Exception as err:  # a plugin that fails to import is the user's input error
            raise click.BadParameter(f"{path} failed to import: {type(err).__name__}: {err}", param_hint="--plugin") from None


plugin_option = click.option(
    "--plugin", multiple=True, type=click.Path(), callback=_load_plugins, expose_value=False,
    help="Python file registering extra defenses, attacks, victims or datasets.",
)


def _split(kind: type, value: str, option: str) -> tuple:
    items = [v.strip() for v in value.split(",") if v.strip()] if value else []
    try:
        return tuple(kind(v) for v in items)
    except ValueError:
        raise click.BadParameter(f"cannot read '{value}' as a list of {kind.__name__}", param_hint=option) from None


def make_executor(kind: str, jobs: int, address: str | None):
    from bench.executors import LocalExecutor, RayExecutor, SerialExecutor

    if kind == "ray":
        return RayExecutor(address=address)
    return LocalExecutor(jobs=jobs) if jobs > 1 else SerialExecutor()


def _execute(spec: GridSpec, data_root: Path, out: Path, *, download: bool, quiet: bool, before_run=None, executor=None):
    """Expand, load every dataset (missing data fails before anything is written), run the grid."""
    from bench.data.root import MissingDataError
    from bench.runner import RunContext
    from bench.store import ResultStore

    cells = expand(spec)
    ctx = RunContext(data_root=data_root, download=download, cache_dir=out / "checkpoints", artifacts_dir=out / "grids")
    store = ResultStore(out)
    # Load the data of every cell still to run (a stored grid loads nothing) before anything is written.
    try:
        for dataset in dict.fromkeys(c.dataset for c in cells if not store.is_done(c)):
            ctx.data(dataset, spec.profile)
    except MissingDataError as err:
        raise GridError(str(err)) from None
    if before_run is not None:
        before_run(cells, store)
    return _run_with_progress(cells, store, ctx, quiet=quiet, executor=executor), store, cells


def _finish(summary, store) -> None:
    click.echo(
        f"{summary.ran} cells run, {summary.skipped} already stored, {len(summary.failed)} failed; "
        f"results in {store.root}/results.parquet"
    )
    if summary.failed:
        sys.exit(1)


def _run_with_progress(cells, store, ctx, *, quiet: bool, executor=None):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from bench.runner import run_grid

    if quiet:
        return run_grid(cells, store=store, ctx=ctx, executor=executor)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task("cells", total=len(cells))

        def done(cell, status):
            label = f"{cell.defense} cr={cell.cr} {cell.attack} seed={cell.seed}"
            progress.update(task, advance=1, description=f"{label}: {status}")

        return run_grid(cells, store=store, ctx=ctx, executor=executor, on_cell_done=done)
