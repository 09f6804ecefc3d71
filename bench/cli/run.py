"""``bench run``: expand a grid, run the cells still to run, store one record per cell."""
from __future__ import annotations

from pathlib import Path

import click

from bench.cli.common import execute_grid, finish, knob_options, knob_values, make_executor, plugin_option, split_list


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
@click.option("--quiet", is_flag=True, help="No progress bar or table.")
def run_command(**opts) -> None:
    """Train every cell of the grid and store one record per cell."""
    from bench.data.autodetect import resolve_datasets
    from bench.run.grid import GridSpec

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
    summary, store, cells = execute_grid(
        spec, data_root, Path(opts["out"]), download=opts["download"], quiet=opts["quiet"],
        executor=make_executor(opts["executor"], opts["jobs"], opts["address"]),
    )
    if not opts["quiet"]:
        from bench.report.console import print_utility_table

        print_utility_table(store.collect(), cells)
    finish(summary, store)
