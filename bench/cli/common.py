"""Pieces shared by the ``bench`` commands: plugin loading, list options, running a grid with progress."""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from bench.errors import GridError, storage_error

if TYPE_CHECKING:
    from contextlib import ExitStack

    from bench.run.cell import Cell


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


def _check_lpips_weights(ctx: click.Context, param: click.Parameter, path: Path | None) -> Path | None:
    if path is None:
        return None
    from bench.metrics.lpips_weights import read_trunk

    try:
        read_trunk(path)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--lpips-weights") from None
    return path.resolve()


lpips_weights_option = click.option(
    "--lpips-weights", type=click.Path(exists=True, dir_okay=False, path_type=Path), callback=_check_lpips_weights,
    help="torchvision AlexNet state dict for LPIPS (default: lpips/alexnet-features.pth under the data root, "
         "else torchvision's cached alexnet-owt-7be5be79.pth; without any LPIPS is left empty, with its reason).",
)


def split_list(kind: type, value: str, option: str) -> tuple:
    items = [v.strip() for v in value.split(",") if v.strip()] if value else []
    try:
        return tuple(kind(v) for v in items)
    except ValueError:
        raise click.BadParameter(f"cannot read '{value}' as a list of {kind.__name__}", param_hint=option) from None


# The knobs every grid command spells shorter: option → knob name.
KNOB_SHORTCUTS = {"cr": "cr", "sigma": "sigma", "tile": "tile", "liftback_width": "width", "attack_budget": "budget"}


def knob_options(command):
    """``--knob NAME=V1,V2`` (repeatable) and its shorter spellings ``--cr``, ``--sigma``, ``--tile``,
    ``--liftback-width``, ``--attack-budget``. A knob not named crosses its declared sweep or default."""
    shortcuts = [
        click.option("--cr", default=None, help="Compression ratios d/k (knob cr) [default: 8,16,32]."),
        click.option("--sigma", default=None, help="DP noise multipliers (knob sigma) [default: 0.02]."),
        click.option("--tile", default=None, help="Block-local tile sides (knob tile) [default: 2]."),
        click.option("--liftback-width", default=None, help="LightSplit-L hidden widths (knob width) [default: 512]."),
        click.option("--attack-budget", default=None,
                     help="Multipliers on every attack iteration/epoch count (knob budget) [default: 1]; 'measured': "
                          "each attack's budget table's for the cell's setting (bench list shows them)."),
        click.option("--knob", "knobs", multiple=True, metavar="NAME=V1,V2",
                     help="Values of any defense's or attack's knob (repeatable; see bench list)."),
    ]
    for option in reversed(shortcuts):
        command = option(command)
    return command


def knob_values(opts: dict) -> dict[str, tuple[str, ...]]:
    """The knob values named on the command line, as strings for each knob to parse and check."""
    values: dict[str, tuple[str, ...]] = {}
    for spec in opts.pop("knobs", ()):
        name, sep, text = spec.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"'{spec}' is not NAME=V1,V2", param_hint="--knob")
        _add(values, name.strip(), split_list(str, text, "--knob"), f"--knob {name.strip()}")
    for option, name in KNOB_SHORTCUTS.items():
        if opts.get(option) is not None:
            _add(values, name, split_list(str, opts.pop(option), f"--{option.replace('_', '-')}"), f"--{option.replace('_', '-')}")
    return values


def _add(values: dict, name: str, items: tuple, option: str) -> None:
    if not items:
        raise click.BadParameter(f"no value for knob '{name}'", param_hint=option)
    if name in values:
        raise click.BadParameter(f"knob '{name}' is named twice", param_hint=option)
    values[name] = items


def make_executor(kind: str, jobs: int, address: str | None, *, device: str = "auto", gpus_per_worker: float = 0.25,
                  threads: int = 1):
    """The executor of a run: Ray tasks (each asking for ``gpus_per_worker`` of a GPU where the run
    computes on GPUs: :func:`bench.run.placement.ray_gpus_per_task` checks the share, and for
    ``threads`` CPUs), ``jobs`` local workers (``threads`` torch threads each) dealt over this
    machine's GPUs, or this process.

    Raises:
        GridError: a device this machine lacks (one line).
    """
    import torch

    from bench.run.executors import LocalExecutor, RayExecutor, SerialExecutor
    from bench.run.placement import worker_devices

    if kind == "ray":
        return RayExecutor(address=address, device=device, gpus_per_task=gpus_per_worker, num_cpus_per_task=threads)
    try:
        devices = worker_devices(device, jobs=jobs, gpu_count=torch.cuda.device_count())
    except ValueError as err:  # a DeviceError, or jobs < 1
        raise GridError(str(err)) from None
    return LocalExecutor(jobs=jobs, threads_per_job=threads, devices=devices) if jobs > 1 else SerialExecutor()


def execute_grid(cells: list[Cell], data_root: Path, out: Path, *, download: bool, quiet: bool, before_run=None, executor=None,
                 lpips_weights: Path | None = None, resources: ExitStack | None = None, device: str = "auto", numerics=None,
                 time_budget: float | None = None, threads: int = 1):
    """Load every dataset the cells still to run need (missing data fails before anything is written),
    then run them. ``cells`` come from :func:`bench.run.grid.expand`, which has checked every choice.
    LPIPS reads its AlexNet trunk from ``lpips_weights`` (default: the shared trunk under the data
    root, ``lpips/alexnet-features.pth``, else torchvision's cached copy). The
    store's lock is held until ``resources`` closes (default: until the current click command ends).
    Cells run in this process compute on ``device`` (resolved here: a device this machine lacks is a
    usage error); an executor's workers on the devices it deals them; all under ``numerics``, each cell
    with ``threads`` torch threads. With a ``time_budget`` (seconds from now) no cell starts that would
    not end within it.

    A folder that cannot be locked or written is found before any cell runs (a one-byte probe in
    ``cells/``: :class:`bench.errors.StorageError`), and the records a run before kept under
    ``recovered/`` after a failed write are stored first (:meth:`bench.run.store.ResultStore.recover`)."""
    from attacks import ATTACKS
    from bench.data.files import DataFileError
    from bench.data.root import MissingDataError
    from bench.run.cache_layout import CACHE_FOLDER
    from bench.run.cell_runner import RunContext
    from bench.run.device import Numerics, resolve_device
    from bench.run.run_options import DeviceError
    from bench.run.store import ResultStore

    try:
        here = resolve_device(device)
    except DeviceError as err:
        raise GridError(str(err)) from None
    if lpips_weights is None:  # the shared trunk under the data root, where it is there
        from bench.metrics.lpips_weights import trunk_under

        lpips_weights = trunk_under(data_root)
    ctx = RunContext(data_root=data_root, download=download, cache_dir=out / CACHE_FOLDER, artifacts_dir=out / "grids",
                     lpips_weights=lpips_weights, device=here, numerics=numerics or Numerics(),
                     deadline=None if time_budget is None else time.time() + time_budget, threads=threads)
    store = ResultStore(out)
    # One run per folder, until the command ends. A folder that exists is locked before anything reads
    # it; a new one only after the checks below, so that bad input leaves no folder behind.
    locked = out.is_dir()
    if locked:
        _hold_lock(store, resources)
        _ready_to_write(store)
    # Load the data of every cell still to run (a stored grid loads nothing) before anything is written,
    # and refuse an attack that cannot apply to a dataset's kind before any victim trains.
    todo = [c for c in cells if not store.is_done(c)]
    try:
        for dataset, profile in dict.fromkeys((c.dataset, c.profile) for c in todo):
            ctx.data(dataset, profile)
    except (MissingDataError, DataFileError) as err:
        raise GridError(str(err)) from None
    for attack, dataset, profile in dict.fromkeys((c.attack, c.dataset, c.profile) for c in todo if c.attack != "none"):
        kinds, kind = ATTACKS.get(attack).kinds, ctx.data(dataset, profile).kind
        if kind not in kinds:
            raise GridError(f"attack {attack} applies to {'/'.join(kinds)} data, not {kind} data (dataset '{dataset}')")
    if not locked:
        _hold_lock(store, resources)
        _ready_to_write(store)
    if before_run is not None:
        try:
            before_run(cells, store)
        except OSError as err:
            raise storage_error(store.cells_dir, err, "no cell ran and no stored cell was touched") from None
    return _run_with_progress(cells, store, ctx, quiet=quiet, executor=executor), store


def _ready_to_write(store) -> None:
    """Find a ``cells/`` folder that cannot take a record before any cell runs, then store the records
    an earlier run kept under ``recovered/``.

    Raises:
        StorageError: either fails (nothing has run).
    """
    try:
        store.check_writable()
        store.recover()
    except OSError as err:
        raise storage_error(store.cells_dir, err, "nothing ran and no stored cell was touched", folder=store.cells_dir) from None


def _hold_lock(store, resources: ExitStack | None = None) -> None:
    """Hold the store's lock until ``resources`` (default: the current command) ends; another run on it
    is a usage error."""
    from bench.run.store_lock import StoreBusyError

    hold = resources.enter_context if resources is not None else click.get_current_context().with_resource
    try:
        hold(store.lock())
    except StoreBusyError as err:
        raise GridError(str(err)) from None


def finish(summary, store) -> None:
    left = f", {summary.left} left to run (time budget)" if summary.left else ""
    click.echo(
        f"{summary.ran} cells run, {summary.skipped} already stored, {len(summary.failed)} failed{left}; "
        f"results in {store.root}/results.parquet"
    )
    if summary.failed:
        sys.exit(1)


def _run_with_progress(cells, store, ctx, *, quiet: bool, executor=None):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from bench.run.runner import run_grid

    if quiet:
        return run_grid(cells, store=store, ctx=ctx, executor=executor)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task("cells", total=len(cells))

        def done(cell, status):
            progress.update(task, advance=1, description=f"{cell.label()}: {status}")

        return run_grid(cells, store=store, ctx=ctx, executor=executor, on_cell_done=done)
