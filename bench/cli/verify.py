"""``bench verify``: the paper's registered claims against stored results."""
from __future__ import annotations

from pathlib import Path

import click


@click.command("verify")
@click.option("--results", "results_dirs", required=True, multiple=True, type=click.Path(file_okay=False),
              help="A results folder (repeatable: the folders' cells are checked together).")
@click.option("--profile", default=None, help="Profile to check (default: the only one stored).")
def verify_command(results_dirs: tuple[str, ...], profile: str | None) -> None:
    """Compare stored results with the paper's registered claims: held, not held, or not testable."""
    import pandas as pd

    from bench.report.claims import verify
    from bench.run.store import ResultStore

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
