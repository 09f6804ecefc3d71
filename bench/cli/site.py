"""``bench site``: the leaderboard as a static site (and its entries as JSON) from stored results.

Reads each results folder's tidy table as ``bench report`` does and the record file of every cell
(the entries hold each file's sha256). Bad input (a folder that does not exist or holds no results,
a record missing, an output folder that is not a site) is one ``error:`` line, exit status 2, and
nothing written. Loads the attack and defense registries (torch) for their descriptions.
"""
from __future__ import annotations

import time
from pathlib import Path

import click

from bench.cli.common import plugin_option


@click.command("site")
@plugin_option
@click.option("--results", "results_dirs", required=True, multiple=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A results folder (repeatable; a cell stored in several is read from the record the newest code wrote).")
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="The site's folder (created; a site already there is replaced).")
def site_command(results_dirs: tuple[Path, ...], out: Path) -> None:
    """Build a static leaderboard site that opens from file:// (no server, nothing from the network):
    one leaderboard per (profile, dataset, victim and cut, setting) ranked by worst-case leakage, a
    page per defense, per attack and per entry, and one JSON entry per row under OUT/entries/."""
    from bench.cli.report import load_results
    from bench.report.combine import combine_tables
    from bench.site.build import SiteOutError, build_site, check_out
    from bench.site.records import MissingRecordError
    from bench.site.row_labels import board_key

    started = time.perf_counter()
    try:
        check_out(out)
    except SiteOutError as err:
        raise click.BadParameter(str(err), param_hint="--out") from None
    tables = [(d.as_posix(), load_results(d)) for d in results_dirs]
    empty = [name for name, table in tables if table.empty]
    if empty:
        raise click.BadParameter(f"no stored cells in {', '.join(empty)}", param_hint="--results")
    table, sources = combine_tables(tables)
    try:
        entries = build_site(table=table, sources=sources, out=out)
    except MissingRecordError as err:
        raise click.BadParameter(str(err), param_hint="--results") from None
    boards = len({board_key(e) for e in entries})
    click.echo(f"wrote {out}/index.html: {boards} leaderboards, {len(entries)} entries in {out}/entries "
               f"({time.perf_counter() - started:.1f} s)")
