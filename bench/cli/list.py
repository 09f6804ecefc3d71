"""``bench list``: every registry and its knobs; with ``--check``, every data file read."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.cli.common import plugin_option


@click.command("list")
@click.option("--data-root", default=None, help="Data folder to look in first (else $BENCH_DATA_ROOT, else the cache folder).")
@click.option("--check", is_flag=True,
              help="Read every file of each dataset found and name each one that cannot be read (exit 1 if any).")
@plugin_option
def list_command(data_root: str | None, check: bool) -> None:
    """Print every registry: datasets and where their files were found, victims and cuts, defenses
    and their knobs, attacks, profiles."""
    from attacks import ATTACKS
    from bench.profiles import PROFILES
    from defenses import DEFENSES, PAYLOAD_TRANSFORMS
    from victims import VICTIMS

    click.echo("datasets:")
    broken = []
    for name, where, root in _dataset_locations(data_root):
        click.echo(f"  {name:<14} {where}")
        if check and root is not None:
            problems = _broken_files(name, root)
            broken += problems
            click.echo(f"  {'':<14} checked: " + (f"{len(problems)} broken" if problems else "every file reads"))
            for problem in problems:
                click.echo(f"  {'':<14} broken: {problem}")
    click.echo("victims:")
    for name in VICTIMS.names():
        victim = VICTIMS.get(name)
        cuts = ", ".join(f"{c} {'x'.join(map(str, s))}" for c, s in victim.cuts.items())
        click.echo(f"  {name:<12} cuts: {cuts} (default {victim.default_cut})")
    click.echo("defenses:")
    for name in DEFENSES.names():
        click.echo(f"  {name:<18} {_knobs(DEFENSES.get(name).knobs)}")
    for name in PAYLOAD_TRANSFORMS.names():
        click.echo(f"  {name:<18} {_knobs(PAYLOAD_TRANSFORMS.get(name).knobs)}  (alone = raw+{name}; composes: <defense>+{name})")
    click.echo("attacks:")
    for name in ATTACKS.names():
        attack = ATTACKS.get(name)
        click.echo(f"  {name:<18} {attack.threat_model.value}, {'/'.join(attack.kinds)} data; {_knobs(attack.knobs)}")
        for entry in attack.budget_table:
            click.echo(f"  {'':<18} measured budget ×{entry.budget:g} on {entry.profile} {entry.dataset} "
                       f"{entry.victim}/{entry.cut} ({entry.verdict})")
    click.echo("profiles:   " + ", ".join(PROFILES))
    click.echo("Cross any knob with --knob NAME=V1,V2 (--cr, --sigma, --tile, --liftback-width, --attack-budget for short);")
    click.echo("--attack-budget measured runs each attack at its measured budget above (closed forms at 1).")
    if broken:
        click.echo(f"error: {len(broken)} data file{'s' if len(broken) != 1 else ''} cannot be read (listed above as broken)",
                   err=True)
        sys.exit(1)


def _dataset_locations(data_root: str | None) -> list[tuple[str, str, Path | None]]:
    """Each dataset, the folder its files were found in (the data root first, then the shared offline
    copy) and the data root it was found under (None: not found, or no files needed). Only the layout
    is checked (nothing is read), so this stays instant."""
    from bench.data import DATASETS, LAYOUTS
    from bench.data.autodetect import OFFLINE_COPIES
    from bench.data.root import resolve_data_root

    roots = list(dict.fromkeys([resolve_data_root(data_root), *OFFLINE_COPIES]))
    rows = []
    for name in DATASETS.names():
        if name not in LAYOUTS:
            rows.append((name, "needs no files", None))
            continue
        found = next(((root, folder) for root in roots if (folder := LAYOUTS.get(name).find(root))), None)
        rows.append((name, f"found in {found[1]}", found[0]) if found
                    else (name, f"not found (looked under {', '.join(map(str, roots))})", None))
    return rows


def _broken_files(name: str, root: Path) -> list[str]:
    """One line per file of dataset ``name`` under ``root`` that its loader cannot read (every file
    the loader reads is read)."""
    from bench.data import DATASETS
    from bench.data.files import DataFileError

    try:
        DATASETS.get(name)(root, download=False)
    except DataFileError as err:
        return [f"{path}: {why}" for path, why in err.problems]
    except (ValueError, OSError) as err:  # a layout the loader refuses as a whole (a folder that is not a class, ...)
        return [" ".join(str(err).split())]
    return []


def _knobs(knobs) -> str:
    return "knobs: " + (", ".join(k.describe() for k in knobs) or "-")
