"""``bench compare``: a new defense against every built-in one, reusing stored baseline results."""
from __future__ import annotations

from pathlib import Path

import click

from bench.cli.common import execute_grid, finish, knob_options, knob_values, plugin_option, split_list
from bench.errors import NOTHING_RAN, PARTIAL_WORK, storage_error


@click.command("compare")
@plugin_option
@click.option("--defense", required=True, help="The new defense(s) to compare, comma list.")
@knob_options
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
    built-in results, and write a leaderboard (one per attack: ranked by the worst-case SSIM over every
    image attack run, ties by that attack's SSIM) and a Pareto plot."""
    from bench.data.autodetect import resolve_datasets
    from bench.report.leaderboard import STANDARD_BASELINES, leaderboard, to_markdown
    from bench.run.grid import GridSpec, expand
    from bench.run.store import atomic_write_text

    new = split_list(str, opts["defense"], "--defense")
    data_root, datasets = resolve_datasets(opts["dataset"], opts["data_root"])
    attacks_ = split_list(str, opts["attack"], "--attack")
    if "none" in attacks_:
        raise click.BadParameter("'none' runs no attack: bench compare ranks defenses by an attack's leakage "
                                 "(name one, e.g. decoder-ref; bench run --attack none stores utility only)",
                                 param_hint="--attack")
    spec = GridSpec(
        datasets=datasets, defenses=tuple(dict.fromkeys(new + STANDARD_BASELINES)), seeds=split_list(int, opts["seeds"], "--seeds"),
        profile=opts["profile"], knobs=knob_values(opts), attacks=attacks_,
    )
    out = Path(opts["out"] or f"results/compare-{'-'.join(new)}")
    baseline = Path(opts["baseline_results"])

    def reuse_baselines(cells, store):
        from bench.run.store import ResultStore

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

    summary, store = execute_grid(expand(spec), data_root, out, download=True, quiet=opts["quiet"], before_run=reuse_baselines)
    try:
        table = store.collect()
        for attack in attacks_:
            board = leaderboard(table, attack=attack)
            text = to_markdown(board, attack=attack)
            atomic_write_text(out / f"leaderboard-{attack}.md", text)
            atomic_write_text(out / f"leaderboard-{attack}.csv", board.to_csv(index=False))
            click.echo(text)
        _write_pareto(table, out, attacks_[0])
    except OSError as err:
        raise storage_error(out, err, "every cell record is stored; the leaderboard is not written", folder=out,
                            exit_code=PARTIAL_WORK if summary.ran else NOTHING_RAN) from None
    finish(summary, store)


def _write_pareto(table, out: Path, attack: str) -> None:
    try:
        from bench.report.figures import pareto_figure
    except ImportError:  # the figures module is optional for a comparison
        return
    for path in pareto_figure(table, out, attack=attack):
        click.echo(f"wrote {path}")
