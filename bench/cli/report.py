"""``bench report`` and ``bench figures``: the paper's tables and figures from a results folder.

Both read the stored tidy table only (``results.parquet``, else ``results.csv``, else the per-cell
records under ``cells/``, collected in memory). Bad input raises :class:`click.UsageError` or
:class:`click.BadParameter` before anything is written; :class:`bench.cli.BenchGroup` turns those
into one ``error: ...`` line and exit status 2. Wire them into a group with :func:`register`.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # pandas is imported by the commands: `bench run` on a stored grid never needs it
    import pandas as pd

FORMATS = {"latex": "tex", "markdown": "md", "csv": "csv"}
FIGURE_NAMES = ("4", "5", "6", "9", "15a", "pareto")


def load_results(results: Path) -> pd.DataFrame:
    """The tidy table stored under ``results`` (read only): ``results.parquet`` (else ``results.csv``)
    when it is newer than every cell record (:meth:`~bench.run.store.ResultStore.current_table`), else
    the records under ``cells/``, collected in memory.

    Raises:
        click.BadParameter: the folder holds no stored results.
    """
    import pandas as pd

    from bench.run.store import ResultStore
    from bench.run.table import with_attack_facts, with_tuning_knob_defaults

    results = Path(results)
    store = ResultStore(results)
    table = store.current_table()
    if table is None:
        if store.cells_dir.is_dir() and any(store.cells_dir.glob("*.json")):
            from bench.run.derived import add_derived_metrics

            return add_derived_metrics(store.table())
        table = store.stored_table()  # no records: whatever table is there
    if table is not None:
        read = pd.read_parquet if table.suffix == ".parquet" else pd.read_csv
        return with_tuning_knob_defaults(with_attack_facts(read(table)))
    raise click.BadParameter(f"no results in {results} (no results.parquet, results.csv or cells/*.json)",
                             param_hint="--results")


def load_folders(folders: tuple[Path, ...] | list[Path]) -> pd.DataFrame:
    """Several results folders' tables as one, each cell's rows from one record: the newest code's
    (:func:`bench.report.combine.combine_tables`).

    Raises:
        click.BadParameter: a folder holds no stored results.
    """
    from bench.report.combine import combine_tables

    return combine_tables([(Path(f).as_posix(), load_results(Path(f))) for f in folders])[0]


def _one_profile(table: pd.DataFrame, profile: str | None) -> pd.DataFrame:
    from bench.report.aggregate import select_profile  # scipy loads only when a report runs

    try:
        return select_profile(table, profile)
    except ValueError as err:
        raise click.UsageError(f"{err} (use --profile)" if profile is None else str(err)) from None


def _names(value: str | None, known: tuple[str, ...], option: str) -> list[str] | None:
    """A comma list checked against ``known`` (case-insensitive), in the given order; None if empty."""
    items = [v.strip() for v in (value or "").split(",") if v.strip()]
    lookup = {k.lower(): k for k in known}
    unknown = [v for v in items if v.lower() not in lookup]
    if unknown:
        raise click.BadParameter(f"unknown {', '.join(unknown)} (choose from {', '.join(known)})", param_hint=option)
    return [lookup[v.lower()] for v in items] or None


class AttackBudgetParam(click.ParamType):
    """``--attack-budget``: a positive number, or ``measured`` (:mod:`bench.report.budgets`)."""

    name = "BUDGET"

    def convert(self, value, param, ctx):  # noqa: ANN001, ANN201 (click's signature)
        from bench.report.budgets import parse_attack_budget

        try:
            return parse_attack_budget(value)
        except ValueError as error:
            self.fail(str(error), param, ctx)


ATTACK_BUDGET = AttackBudgetParam()
ATTACK_BUDGET_HELP = ("'measured': each attack at its budget table's budget for the cell's setting (what a grid "
                      "with budget = \"measured\" ran; bench list shows them), each column's header naming it.")


def require_attack_cells_at(table: pd.DataFrame, budget: float | str, results: tuple) -> None:
    """Refuse an ``--attack-budget`` other than 1 at which no attack cell of ``table`` was run."""
    from bench.report.aggregate import at_default_settings
    from bench.report.budgets import describe

    if budget != 1.0 and at_default_settings(table[table["attack"] != "none"], budget=budget).empty:
        at = describe(budget) if budget == "measured" else f"budget {budget:g}"
        raise click.BadParameter(f"no attack cell was run at {at} in {', '.join(map(str, results))}",
                                 param_hint="--attack-budget")


def _no_data(table: pd.DataFrame, results: tuple[Path, ...]) -> str:
    """Why no table has data, in one line: the folders, and what failed or diverged there."""
    from bench.report.failures import failure_notes

    where = ", ".join(map(str, results))
    failures = failure_notes(table)
    if not failures:
        return f"no table has data in {where}"
    more = f" (and {len(failures) - 1} more such configurations: bench verify lists them)" if len(failures) > 1 else ""
    return f"no table has data in {where}; {failures[0][0].lower()}{failures[0][1:]}{more}"


@click.command("report")
@click.option("--results", required=True, multiple=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Results folder (results.parquet, results.csv or cells/); repeat it to report several together "
                   "(a cell stored in several is read from the record the newest code wrote).")
@click.option("--table", "tables", default=None,
              help="Comma list of tables (II, III, V, ...; LABELS, LEAKAGE, LEAKAGE-RANK: label leakage, the attack-free "
                   "measures and their rank correlation with the worst case; DEMO: make demo's summary, only when named); "
                   "default: all of them but DEMO with data.")
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="markdown", show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="A file (with a suffix) or a folder (one file per table); default: stdout.")
@click.option("--profile", default=None, help="The profile to report when the results hold several.")
@click.option("--standalone", is_flag=True, help="LaTeX: wrap each table in a minimal compilable document.")
@click.option("--attack-budget", type=ATTACK_BUDGET, default=1.0, show_default=True,
              help="The attack budget the attack columns show, e.g. 4 where the attacks converged at ×4; "
                   + ATTACK_BUDGET_HELP)
def report_command(results: tuple[Path, ...], tables: str | None, fmt: str, out: Path | None, profile: str | None,
                   standalone: bool, attack_budget: float | str) -> None:
    """Regenerate the paper's tables from stored results: mean ± 95% CI over seeds, Δ vs Raw."""
    from bench.errors import storage_error
    from bench.report.render import RENDERERS, to_latex
    from bench.report.table_specs import EXTRA_TABLES
    from bench.report.tables import TABLES, build_table
    from bench.run.store import atomic_write_text

    specs = {**TABLES, **EXTRA_TABLES}
    names = _names(tables, tuple(specs), "--table")
    table = _one_profile(load_folders(results), profile)
    require_attack_cells_at(table, attack_budget, results)
    built = [build_table(table, specs[name], profile, attack_budget=attack_budget) for name in (names or TABLES)]
    if names is None:
        built = [b for b in built if b.has_defended_rows and (attack_budget == 1.0 or b.has_attack_columns)]
        if not built:
            raise click.UsageError(_no_data(table, results))
    render = (lambda b: to_latex(b, standalone=standalone)) if fmt == "latex" else RENDERERS[fmt]
    texts = [(b.spec.name, render(b)) for b in built]
    if out is None:
        click.echo("\n".join(text for _, text in texts), nl=False)
        return
    if out.suffix and not out.is_dir():
        if fmt == "csv" and len(texts) > 1:
            raise click.BadParameter("CSV of several tables needs a folder, not a file", param_hint="--out")
        if fmt == "latex" and standalone and len(texts) > 1:
            raise click.BadParameter("several standalone LaTeX documents need a folder, not a file", param_hint="--out")
        files = [(out, "\n".join(text for _, text in texts))]
    else:
        files = [(out / f"table_{name}.{FORMATS[fmt]}", text) for name, text in texts]
    for path, text in files:
        try:
            atomic_write_text(path, text)
        except OSError as err:
            raise storage_error(path, err, "the stored results were only read", folder=path.parent) from None
        click.echo(f"wrote {path}", err=True)


@click.command("figures")
@click.option("--results", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Results folder (its grids/ feed Fig. 6).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder [default: RESULTS/figures].")
@click.option("--figure", "figures", default=",".join(FIGURE_NAMES), show_default=True, help="Comma list.")
@click.option("--attack", default=None, help="Attack to plot (Fig. 5, 6: only it; 15a, Pareto: its privacy metric).")
@click.option("--metric", default=None, help="Privacy metric of Fig. 15a and the Pareto front [default: ssim].")
@click.option("--profile", default=None, help="The profile to plot when the results hold several.")
def figures_command(results: Path, out: Path | None, figures: str, attack: str | None, metric: str | None,
                    profile: str | None) -> None:
    """Draw the paper's figures (PNG and PDF) from stored results."""
    from bench.report import figures as F
    from bench.report.lm_figure import fig9_perplexity_inflation

    chosen = _names(figures, FIGURE_NAMES, "--figure") or list(FIGURE_NAMES)
    table = _one_profile(load_results(results), profile)
    attacks = sorted(set(table["attack"].dropna()) - {"none"})
    if attack is not None and attack not in attacks:
        raise click.BadParameter(f"attack '{attack}' is not in the results (present: {', '.join(attacks) or 'none'})",
                                 param_hint="--attack")
    if metric is not None and metric not in set(table["metric"].dropna()):
        raise click.BadParameter(f"metric '{metric}' is not in the results", param_hint="--metric")
    metric = metric or "ssim"
    out = out or results / "figures"
    skip = lambda message: click.echo(message, err=True)  # noqa: E731
    only = [attack] if attack else None
    calls = {
        "4": lambda: F.fig4_utility(table, out, on_skip=skip),
        "5": lambda: F.fig5_privacy_deltas(table, out, attacks=only, on_skip=skip),
        "6": lambda: F.fig6_grids(table, results, out, attacks=only, on_skip=skip),
        "9": lambda: fig9_perplexity_inflation(table, out, on_skip=skip),
        "15a": lambda: F.fig15a_cr_sweep(table, out, attack=attack, metric=metric, on_skip=skip),
        "pareto": lambda: F.pareto_figure(table, out, attack=attack, metric=metric, on_skip=skip),
    }
    written = [path for name in chosen for path in calls[name]()]
    for path in written:
        click.echo(str(path))
    if not written:
        click.echo("no figure written: the results hold no data for the chosen figures", err=True)
