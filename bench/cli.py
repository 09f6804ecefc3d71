"""The ``bench`` command line: ``bench run``, ``bench list``.

Every usage error prints one line, ``error: ...``, exits with status 2 and writes nothing.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.grid import GridError, GridSpec, expand


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


@click.group(cls=BenchGroup)
@plugin_option
def main() -> None:
    """A benchmark suite for privacy at the split-learning cut layer."""
    import attacks  # noqa: F401  (registration)
    import bench.data  # noqa: F401
    import defenses  # noqa: F401
    import victims  # noqa: F401


def _register_reports() -> None:
    from bench.report.cli import register

    register(main)


_register_reports()


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
    from bench.report_console import print_utility_table

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
        print_utility_table(store.collect(), cells)
    _finish(summary, store)


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
    try:
        for dataset in spec.datasets:
            ctx.data(dataset, spec.profile)
    except MissingDataError as err:
        raise GridError(str(err)) from None
    store = ResultStore(out)
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


@main.command("compare")
@plugin_option
@click.option("--defense", required=True, help="The new defense(s) to compare, comma list.")
@click.option("--cr", default="8,16,32", show_default=True)
@click.option("--attack", default=",".join(("decoder-ref",)), show_default=True)
@click.option("--seeds", default="0,1,2", show_default=True)
@click.option("--profile", default="cpu", show_default=True)
@click.option("--dataset", default="auto", show_default=True)
@click.option("--data-root", default=None)
@click.option("--baseline-results", default="results/issue3-attacks", show_default=True, type=click.Path(file_okay=False),
              help="Stored results whose built-in cells are reused instead of rerun (when present).")
@click.option("--out", default=None, type=click.Path(file_okay=False), help="Default: results/compare-<defense>.")
@click.option("--quiet", is_flag=True)
def compare_command(**opts) -> None:
    """Run the standard comparison grid for a new defense against every built-in defense, reusing stored
    built-in results, and write a leaderboard and a Pareto plot."""
    from bench.data.autodetect import resolve_datasets
    from bench.leaderboard import STANDARD_BASELINES, leaderboard, to_markdown
    from bench.store import atomic_write_text

    new = _split(str, opts["defense"], "--defense")
    data_root, datasets = resolve_datasets(opts["dataset"], opts["data_root"])
    attacks_ = _split(str, opts["attack"], "--attack")
    spec = GridSpec(
        datasets=datasets, defenses=tuple(dict.fromkeys(new + STANDARD_BASELINES)), seeds=_split(int, opts["seeds"], "--seeds"),
        profile=opts["profile"], crs=_split(float, opts["cr"], "--cr"), attacks=attacks_,
    )
    out = Path(opts["out"] or f"results/compare-{'-'.join(new)}")
    baseline = Path(opts["baseline_results"])

    def reuse_baselines(cells, store):
        from bench.store import ResultStore

        if not baseline.is_dir():
            return
        stored = ResultStore(baseline)
        for cell in cells:
            record = stored.load(cell) if cell.defense not in new else None
            if record is not None and record.status == "ok" and not store.is_done(cell):
                store.write(record)
                grid = baseline / "grids" / f"{cell.id}.png"
                if grid.exists():
                    (out / "grids").mkdir(parents=True, exist_ok=True)
                    (out / "grids" / grid.name).write_bytes(grid.read_bytes())

    summary, store, _ = _execute(spec, data_root, out, download=True, quiet=opts["quiet"], before_run=reuse_baselines)
    table = store.collect()
    for attack in attacks_:
        board = leaderboard(table, attack=attack)
        text = to_markdown(board, attack=attack)
        atomic_write_text(out / f"leaderboard-{attack}.md", text)
        atomic_write_text(out / f"leaderboard-{attack}.csv", board.to_csv(index=False))
        click.echo(text)
    _write_pareto(table, out, attacks_[0])
    _finish(summary, store)


def _write_pareto(table, out: Path, attack: str) -> None:
    try:
        from bench.report.figures import pareto_figure
    except ImportError:  # the figures module is optional for a comparison
        return
    for path in pareto_figure(table, out, attack=attack):
        click.echo(f"wrote {path}")


@main.command("verify")
@click.option("--results", "results_dir", required=True, type=click.Path(file_okay=False), help="A results folder.")
@click.option("--profile", default=None, help="Profile to check (default: the only one stored).")
def verify_command(results_dir: str, profile: str | None) -> None:
    """Compare stored results with the paper's registered claims: held, not held, or not testable."""
    from bench.claims import verify
    from bench.store import ResultStore

    table = ResultStore(Path(results_dir)).table()
    if table.empty:
        raise click.UsageError(f"no stored results under {results_dir}")
    profiles = sorted(table["profile"].dropna().unique())
    if profile is None:
        if len(profiles) != 1:
            raise click.UsageError(f"results hold profiles {', '.join(profiles)}; pick one with --profile")
        profile = profiles[0]
    elif profile not in profiles:
        raise click.UsageError(f"no results of profile '{profile}' under {results_dir}")
    verdicts = verify(table, profile)
    for v in verdicts:
        click.echo(f"[{v.status:^12}] {v.claim.id} ({v.claim.table}): {v.claim.text} — {v.detail}")
    counts = {s: sum(v.status == s for v in verdicts) for s in ("held", "not held", "not testable")}
    click.echo(f"{counts['held']} held, {counts['not held']} not held, {counts['not testable']} not testable ({profile} profile)")


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


if __name__ == "__main__":
    main()
