"""``bench run``: expand a grid, run the cells still to run, store one record per cell."""
from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from bench.cli.common import execute_grid, finish, knob_options, knob_values, lpips_weights_option, make_executor, plugin_option, split_list
from bench.run.run_options import RunOptions

if TYPE_CHECKING:
    from bench.run.cell import Cell

# The options that may come with --config: the run options (which override the file's) and these.
NOT_GRID_OPTIONS = {f.name for f in fields(RunOptions)} | {"quiet", "config", "dry_run", "lpips_weights"}


def _check_device(ctx: click.Context, param: click.Parameter, value: str) -> str:
    from bench.run.run_options import check_device_name

    try:
        return check_device_name(value)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--device") from None


@click.command("run")
@plugin_option
@click.option("--dataset", default="auto", show_default=True, help="Comma list; 'auto' = offline MNIST if present, else digits.")
@click.option("--victim", default=None, help="Victim model (default: the dataset's usual victim).")
@click.option("--cut", default=None, help="Cut name (default: the victim's default cut).")
@click.option("--defense", default="raw,lightsplit-f", show_default=True)
@click.option("--attack", default="none", show_default=True)
@knob_options
@click.option("--lambda-wcc", default="0", show_default=True, help="WCC weights.")
@click.option("--seeds", default="0", show_default=True)
@click.option("--profile", default="cpu", show_default=True)
@click.option("--protocol", default="ushaped", show_default=True, help="ushaped | vanilla")
@click.option("--heads", default="sch", show_default=True, help="sch (shared head) | pch (per-client heads)")
@click.option("--partition", default="iid", show_default=True, help="iid | dirichlet")
@click.option("--alpha", type=float, default=None, help="Dirichlet concentration.")
@click.option("--clients", type=int, default=1, show_default=True)
@click.option("--out", default="results/latest", show_default=True, type=click.Path(file_okay=False))
@click.option("--data-root", default=None, help="Data folder (else $BENCH_DATA_ROOT, else the cache folder).")
@click.option("--download/--no-download", default=True, show_default=True, help="Download missing data when a network exists.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True)
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True, help="Local worker processes.")
@click.option("--address", default=None, help="Ray cluster address (default: start a local Ray instance).")
@click.option("--device", default="auto", show_default=True, callback=_check_device,
              help="auto (CUDA when present) | cpu | cuda | cuda:N; local workers are dealt over the GPUs. Not part of a cell's id.")
@click.option("--gpus-per-worker", type=click.FloatRange(min=0, min_open=True, max=1), default=0.25, show_default=True,
              help="The share of a GPU each Ray worker asks for (0.25: four workers per GPU).")
@click.option("--tf32/--no-tf32", default=False, show_default=True,
              help="TF32 matrix products and convolutions on GPUs (recorded on every row).")
@click.option("--autocast", type=click.Choice(["none", "bf16"]), default="none", show_default=True,
              help="bf16 autocast around training and attacks; metrics stay float32 (recorded on every row).")
@click.option("--deterministic", is_flag=True, help="PyTorch's deterministic algorithms (recorded on every row).")
@click.option("--time-budget", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds: start no cell that would not end in time (a cell of a kind not yet run always starts); "
                   "the rest stay to run.")
@click.option("--threads", type=click.IntRange(min=1), default=1, show_default=True,
              help="Torch threads each cell runs with, serial or in a worker (recorded on every row as torch_threads).")
@click.option("--quiet", is_flag=True, help="No progress bar or table (with --dry-run: the summary line only).")
@click.option("--config", type=click.Path(dir_okay=False), default=None,
              help="TOML grid file: one or more grids run in order into one folder, and their run options; "
                   "not with the grid options. Run options given here override the file's.")
@lpips_weights_option
@click.option("--dry-run", is_flag=True, help="List every cell, stored or to run, and estimate the time left; run and write nothing.")
def run_command(**opts) -> None:
    """Train every cell of the grid and store one record per cell."""
    from bench.data.root import resolve_data_root

    if opts["config"]:
        cells, options = _from_config(opts)
        data_root = resolve_data_root(options.data_root)
    else:
        cells, options, data_root = _from_options(opts)
    out = Path(options.out)
    if opts["dry_run"]:
        from bench.run.dry_run import dry_run_lines

        lines = dry_run_lines(cells, out, jobs=options.jobs if options.executor == "local" else 1)
        for line in lines[-1:] if opts["quiet"] else lines:
            click.echo(line)
        return
    from bench.cli.stopping import stop_on_signals
    from bench.run.device import Numerics

    executor = make_executor(options.executor, options.jobs, options.address, device=options.device,
                             gpus_per_worker=options.gpus_per_worker, threads=options.threads)
    with stop_on_signals(out):
        summary, store = execute_grid(
            cells, data_root, out, download=options.download, quiet=opts["quiet"], executor=executor,
            lpips_weights=opts["lpips_weights"], device=options.device if options.executor == "local" else "cpu",
            numerics=Numerics(tf32=options.tf32, autocast=options.autocast, deterministic=options.deterministic),
            time_budget=options.time_budget, threads=options.threads,
        )
    if not opts["quiet"]:
        from bench.report.console import print_utility_table
        from bench.run.derived import add_derived_metrics

        print_utility_table(add_derived_metrics(store.table()), cells)  # the run wrote the table already
    finish(summary, store)


def _from_options(opts: dict) -> tuple[list[Cell], RunOptions, Path]:
    """The cells of the grid the options name, the run options, the data root."""
    from bench.data.autodetect import resolve_datasets
    from bench.run.grid import GridSpec, expand

    data_root, datasets = resolve_datasets(opts["dataset"], opts["data_root"])
    spec = GridSpec(
        datasets=datasets,
        defenses=split_list(str, opts["defense"], "--defense"),
        seeds=split_list(int, opts["seeds"], "--seeds"),
        profile=opts["profile"],
        victim=opts["victim"],
        cut=opts["cut"],
        knobs=knob_values(opts),
        lambda_wccs=split_list(float, opts["lambda_wcc"], "--lambda-wcc"),
        attacks=split_list(str, opts["attack"], "--attack"),
        protocol=opts["protocol"],
        heads=opts["heads"],
        partition=opts["partition"],
        alpha=opts["alpha"],
        clients=opts["clients"],
    )
    options = RunOptions(**{f.name: opts[f.name] for f in fields(RunOptions)})
    return expand(spec), options, data_root


def _from_config(opts: dict) -> tuple[list[Cell], RunOptions]:
    """The cells of every grid of the ``--config`` file, and its run options with those given on the
    command line put over them."""
    from bench.run.grid_file import load_grid_file

    ctx = click.get_current_context()
    given = {name for name in opts if ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)}
    clash = [param.opts[0] for param in ctx.command.params if param.name in given and param.name not in NOT_GRID_OPTIONS]
    if clash:
        raise click.UsageError(f"--config cannot be combined with {', '.join(clash)} (put the grid's choices in the file)")
    grid_file = load_grid_file(opts["config"])
    overrides = {f.name: opts[f.name] for f in fields(RunOptions) if f.name in given}
    return list(grid_file.cells), replace(grid_file.options, **overrides)
