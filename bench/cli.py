"""The ``bench`` command line: ``bench run``, ``bench list``.

Every usage error prints one line, ``error: ...``, exits with status 2 and writes nothing.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.cli_common import _execute, _finish, _split, make_executor, plugin_option
from bench.grid import GridError, GridSpec


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


@click.group(cls=BenchGroup)
@plugin_option
def main() -> None:
    """A benchmark suite for privacy at the split-learning cut layer."""
    import attacks  # noqa: F401  (registration)
    import bench.data  # noqa: F401
    import defenses  # noqa: F401
    import victims  # noqa: F401


def _register_commands() -> None:
    from bench.compare import register as register_compare
    from bench.report.cli import register as register_reports

    register_reports(main)
    register_compare(main)


_register_commands()


@main.command("list")
@plugin_option
def list_command() -> None:
    """Print every registry: datasets, victims and cuts, defenses and their knobs, attacks, profiles."""
    from attacks import ATTACKS
    from bench.data import DATASETS
    from bench.profiles import PROFILES
    from defenses import DEFENSES, PAYLOAD_TRANSFORMS
    from victims import VICTIMS

    click.echo("datasets:   " + ", ".join(DATASETS.names()))
    click.echo("victims:")
    for name in VICTIMS.names():
        victim = VICTIMS.get(name)
        cuts = ", ".join(f"{c} {'x'.join(map(str, s))}" for c, s in victim.cuts.items())
        click.echo(f"  {name:<12} cuts: {cuts} (default {victim.default_cut})")
    click.echo("defenses:")
    for name in DEFENSES.names():
        knobs = ", ".join(DEFENSES.get(name).knobs) or "-"
        click.echo(f"  {name:<14} knobs: {knobs}")
    for name in PAYLOAD_TRANSFORMS.names():
        knobs = ", ".join(PAYLOAD_TRANSFORMS.get(name).knobs)
        click.echo(f"  {name:<14} knobs: {knobs}  (alone = raw+{name}; composes: <defense>+{name})")
    click.echo("attacks:    " + (", ".join(ATTACKS.names()) or "(none registered)"))
    click.echo("profiles:   " + ", ".join(PROFILES))


@main.command("run")
@plugin_option
@click.option("--dataset", default="auto", show_default=True, help="Comma list; 'auto' = offline MNIST if present, else digits.")
@click.option("--victim", default=None, help="Victim model (default: the dataset's usual victim).")
@click.option("--cut", default=None, help="Cut name (default: the victim's default cut).")
@click.option("--defense", default="raw,lightsplit-f", show_default=True)
@click.option("--attack", default="none", show_default=True)
@click.option("--cr", default="8,16,32", show_default=True, help="Compression ratios d/k.")
@click.option("--sigma", default="0.02", show_default=True, help="DP noise multipliers.")
@click.option("--tile", default="2", show_default=True, help="Block-local tile sides.")
@click.option("--liftback-width", default="512", show_default=True, help="LightSplit-L hidden widths.")
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

    data_root, datasets = resolve_datasets(opts["dataset"], opts["data_root"])
    spec = GridSpec(
        datasets=datasets,
        defenses=_split(str, opts["defense"], "--defense"),
        seeds=_split(int, opts["seeds"], "--seeds"),
        profile=opts["profile"],
        victim=opts["victim"],
        cut=opts["cut"],
        crs=_split(float, opts["cr"], "--cr"),
        sigmas=_split(float, opts["sigma"], "--sigma"),
        tiles=_split(int, opts["tile"], "--tile"),
        widths=_split(int, opts["liftback_width"], "--liftback-width"),
        lambda_wccs=_split(float, opts["lambda_wcc"], "--lambda-wcc"),
        attacks=_split(str, opts["attack"], "--attack"),
        protocol=opts["protocol"],
        heads=opts["heads"],
        partition=opts["partition"],
        alpha=opts["alpha"],
        clients=opts["clients"],
    )
    summary, store, cells = _execute(
        spec, data_root, Path(opts["out"]), download=opts["download"], quiet=opts["quiet"],
        executor=make_executor(opts["executor"], opts["jobs"], opts["address"]),
    )
    if not opts["quiet"]:
        from bench.report_console import print_utility_table

        print_utility_table(store.collect(), cells)
    _finish(summary, store)


@main.command("verify")
@click.option("--results", "results_dirs", required=True, multiple=True, type=click.Path(file_okay=False),
              help="A results folder (repeatable: the folders' cells are checked together).")
@click.option("--profile", default=None, help="Profile to check (default: the only one stored).")
def verify_command(results_dirs: tuple[str, ...], profile: str | None) -> None:
    """Compare stored results with the paper's registered claims: held, not held, or not testable."""
    import pandas as pd

    from bench.claims import verify
    from bench.store import ResultStore

    tables = [ResultStore(Path(d)).table() for d in results_dirs]
    table = pd.concat([t for t in tables if not t.empty], ignore_index=True) if any(not t.empty for t in tables) else tables[0]
    if table.empty:
        raise click.UsageError(f"no stored results under {', '.join(results_dirs)}")
    profiles = sorted(table["profile"].dropna().unique())
    if profile is None:
        if len(profiles) != 1:
            raise click.UsageError(f"results hold profiles {', '.join(profiles)}; pick one with --profile")
        profile = profiles[0]
    elif profile not in profiles:
        raise click.UsageError(f"no results of profile '{profile}' under {', '.join(results_dirs)}")
    verdicts = verify(table, profile)
    for v in verdicts:
        click.echo(f"[{v.status:^12}] {v.claim.id} ({v.claim.table}): {v.claim.text} — {v.detail}")
    counts = {s: sum(v.status == s for v in verdicts) for s in ("held", "not held", "not testable")}
    click.echo(f"{counts['held']} held, {counts['not held']} not held, {counts['not testable']} not testable ({profile} profile)")


if __name__ == "__main__":
    main()
