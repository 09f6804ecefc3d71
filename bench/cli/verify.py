"""``bench verify``: the paper's registered claims against stored results, or (``--integrity``) every
stored record against its own checksum and every leaderboard entry against the records it names."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from bench.cli.report import ATTACK_BUDGET, ATTACK_BUDGET_HELP

DEFAULT_ENTRIES = "site/entries"  # where `bench site --out site` writes them


@click.command("verify")
@click.option("--results", "results_dirs", required=True, multiple=True, type=click.Path(file_okay=False),
              help="A results folder (repeatable: the folders' cells are checked together; a cell stored in several "
                   "is read from the record the newest code wrote).")
@click.option("--profile", default=None, help="Profile to check (default: the only one stored).")
@click.option("--integrity", is_flag=True,
              help="Check every record against its checksum instead (exit 1 if one was changed after it was written), "
                   "and every leaderboard entry against the records it names.")
@click.option("--entries", "entries_dirs", multiple=True, type=click.Path(exists=True, file_okay=False),
              help=f"With --integrity: a folder of leaderboard entries, or a site holding entries/ (repeatable) "
                   f"[default: {DEFAULT_ENTRIES} where it exists].")
@click.option("--attack-budget", type=ATTACK_BUDGET, default=1.0, show_default=True,
              help="Read the attacks at this budget, e.g. 4 where they converged only at ×4 (not with --integrity); "
                   + ATTACK_BUDGET_HELP)
def verify_command(results_dirs: tuple[str, ...], profile: str | None, integrity: bool, entries_dirs: tuple[str, ...],
                   attack_budget: float | str) -> None:
    """Compare stored results with the paper's registered claims: held, not held, within noise (the two
    sides' means are closer than 2·SE of their difference), no leakage measured (the attack is within
    noise of the prior's floor) or not testable; then a note for each configuration whose every stored
    cell failed or diverged, with the first line of each reason, and, where attack-free measures are stored,
    whether they rank the defenses as the worst case does: Spearman's and Kendall's rank correlations (with
    --integrity: check every
    stored record against its own checksum, and every leaderboard entry's records against the sha256
    the entry holds)."""
    if entries_dirs and not integrity:
        raise click.UsageError("--entries applies to --integrity only")
    if integrity:
        if profile is not None or attack_budget != 1.0:
            raise click.UsageError(f"{'--profile' if profile is not None else '--attack-budget'} does not apply to --integrity")
        if not entries_dirs and Path(DEFAULT_ENTRIES).is_dir():
            entries_dirs = (DEFAULT_ENTRIES,)
        records_ok = _check_integrity(results_dirs)
        entries_ok = _check_entries(entries_dirs, results_dirs) if entries_dirs else True
        if not (records_ok and entries_ok):
            sys.exit(1)
        return
    from bench.cli.report import load_folders, require_attack_cells_at
    from bench.report.budgets import describe
    from bench.report.claims import VERDICTS, verify

    table = load_folders([Path(d) for d in results_dirs])
    if table.empty:
        raise click.UsageError(f"no stored results under {', '.join(results_dirs)}")
    profiles = sorted(table["profile"].dropna().unique())
    if profile is None:
        if len(profiles) != 1:
            raise click.UsageError(f"results hold profiles {', '.join(profiles)}; pick one with --profile")
        profile = profiles[0]
    elif profile not in profiles:
        raise click.UsageError(f"no results of profile '{profile}' under {', '.join(results_dirs)}")
    require_attack_cells_at(table, attack_budget, results_dirs)
    verdicts = verify(table, profile, attack_budget=attack_budget)
    for v in verdicts:
        note = v.convergence_note()
        click.echo(f"[{v.status:^12}] {v.dataset}: {v.claim.id} ({v.claim.table}): {v.claim.text} — {v.detail}"
                   + (f" — {note}" if note else ""))
    from bench.report.failures import failure_notes

    for line in failure_notes(table[table["profile"] == profile]):
        click.echo(f"note: {line}")
    from bench.report.rank_correlation import agreement_lines

    for line in agreement_lines(table, profile=profile):
        click.echo(line)
    on_attacks = [v for v in verdicts if v.convergence]
    unsettled = sum(not v.on_converged_attacks for v in on_attacks)
    click.echo(f"convergence at {describe(attack_budget)}: {len(on_attacks) - unsettled} testable claims on attacks rest on "
               f"converged attacks, {unsettled} on an attack not converged (not converged, unstable or unknown)")
    counts = ", ".join(f"{sum(v.status == s for v in verdicts)} {s}" for s in VERDICTS)
    their = " their budget" if attack_budget != "measured" else ""
    at = "" if attack_budget == 1.0 else f", attacks at {describe(attack_budget)}{their}"
    click.echo(f"{counts} ({profile} profile{at})")


def _check_integrity(results_dirs: tuple[str, ...]) -> bool:
    """One line per record whose content does not match its checksum, then a summary; False on any.
    A record that cannot be read at all is moved aside by the store (one warning line each)."""
    from bench.run.record import INTACT, MISMATCH, NO_CHECKSUM
    from bench.run.store import ResultStore

    stores = [ResultStore(Path(d)) for d in results_dirs]
    on_disk = sum(1 for s in stores if s.cells_dir.is_dir() for _ in s.cells_dir.glob("*.json"))
    stored = [r for s in stores for r in s.checked_records()]
    if not on_disk:
        raise click.UsageError(f"no stored results under {', '.join(results_dirs)}")
    for r in stored:
        if r.integrity == MISMATCH:
            click.echo(f"changed: {r.path} does not match its checksum (edited after it was written)")
    counts = {status: sum(r.integrity == status for r in stored) for status in (INTACT, MISMATCH, NO_CHECKSUM)}
    damaged = on_disk - len(stored)
    click.echo(
        f"{len(stored)} records: {counts[INTACT]} match their checksum, {counts[MISMATCH]} do not, "
        f"{counts[NO_CHECKSUM]} written before checksums existed (not checkable)"
        + (f"; {damaged} unreadable, moved aside" if damaged else "")
    )
    return not (counts[MISMATCH] or damaged)


def _check_entries(entries_dirs: tuple[str, ...], results_dirs: tuple[str, ...]) -> bool:
    """One line per problem of the entries under ``entries_dirs``, then a summary; False on any."""
    from bench.site.integrity import check_entries, entry_files

    files = [f for d in entries_dirs for f in entry_files(Path(d))]
    if not files:
        raise click.UsageError(f"no leaderboard entries (*.json) under {', '.join(entries_dirs)}")
    check = check_entries(files, results_dirs=[Path(d) for d in results_dirs])
    for problem in check.problems:
        click.echo(problem)
    click.echo(f"{check.entries} entries naming {check.records} records: "
               + (f"{len(check.problems)} problems" if check.problems else "every record present and matching its sha256"))
    return not check.problems
