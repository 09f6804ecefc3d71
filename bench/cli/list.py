"""``bench list``: every registry and its knobs."""
from __future__ import annotations

import click

from bench.cli.common import plugin_option


@click.command("list")
@click.option("--data-root", default=None, help="Data folder to look in first (else $BENCH_DATA_ROOT, else the cache folder).")
@plugin_option
def list_command(data_root: str | None) -> None:
    """Print every registry: datasets and where their files were found, victims and cuts, defenses
    and their knobs, attacks, profiles."""
    from attacks import ATTACKS
    from bench.profiles import PROFILES
    from defenses import DEFENSES, PAYLOAD_TRANSFORMS
    from victims import VICTIMS

    click.echo("datasets:")
    for name, where in _dataset_locations(data_root):
        click.echo(f"  {name:<14} {where}")
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
    click.echo("profiles:   " + ", ".join(PROFILES))
    click.echo("Cross any knob with --knob NAME=V1,V2 (--cr, --sigma, --tile, --liftback-width, --attack-budget for short).")


def _dataset_locations(data_root: str | None) -> list[tuple[str, str]]:
    """Each dataset and the folder its files were found in: the data root first, then the shared
    offline copy. Only the layout is checked (nothing is read), so this stays instant."""
    from bench.data import DATASETS, LAYOUTS
    from bench.data.autodetect import OFFLINE_COPIES
    from bench.data.root import resolve_data_root

    roots = list(dict.fromkeys([resolve_data_root(data_root), *OFFLINE_COPIES]))
    rows = []
    for name in DATASETS.names():
        if name not in LAYOUTS:
            rows.append((name, "needs no files"))
            continue
        found = next((folder for folder in (LAYOUTS.get(name).find(root) for root in roots) if folder), None)
        rows.append((name, f"found in {found}" if found else f"not found (looked under {', '.join(map(str, roots))})"))
    return rows


def _knobs(knobs) -> str:
    return "knobs: " + (", ".join(k.describe() for k in knobs) or "-")
