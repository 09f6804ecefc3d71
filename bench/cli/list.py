"""``bench list``: every registry and its knobs."""
from __future__ import annotations

import click

from bench.cli.common import plugin_option


@click.command("list")
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
        click.echo(f"  {name:<18} {_knobs(DEFENSES.get(name).knobs)}")
    for name in PAYLOAD_TRANSFORMS.names():
        click.echo(f"  {name:<18} {_knobs(PAYLOAD_TRANSFORMS.get(name).knobs)}  (alone = raw+{name}; composes: <defense>+{name})")
    click.echo("attacks:")
    for name in ATTACKS.names():
        attack = ATTACKS.get(name)
        click.echo(f"  {name:<18} {attack.threat_model.value}, {'/'.join(attack.kinds)} data; {_knobs(attack.knobs)}")
    click.echo("profiles:   " + ", ".join(PROFILES))
    click.echo("Cross any knob with --knob NAME=V1,V2 (--cr, --sigma, --tile, --liftback-width, --attack-budget for short).")


def _knobs(knobs) -> str:
    return "knobs: " + (", ".join(k.describe() for k in knobs) or "-")
