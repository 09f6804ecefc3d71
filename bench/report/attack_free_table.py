"""The attack-free table (``bench report --table LEAKAGE``): per defense configuration, the measures
the trained client itself gives (:data:`bench.leakage.names.MEASURES`: distance correlation, the
Gaussian-channel bounds, dFIL and its MSE bound) beside the worst-case SSIM over every image attack
stored (:mod:`bench.report.worst_case`, the linear probe among them).

It is built like the paper's tables (:func:`bench.report.tables.build_table`): the measures are the
victim's own metrics (mean ± 95% CI over seeds), absolute; a measure that does not apply to a defense
is "—" with the reason its rows store in a footnote. Results without any attack-free measure (stored
before they were recorded) give an empty table, so ``bench report`` leaves it out. How the measures
and the worst case rank the defenses is Table LEAKAGE-RANK (:mod:`bench.report.rank_correlation`).
"""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from bench.leakage.names import MEASURES
from bench.report.budgets import AttackBudget
from bench.report.labels import better_arrow, metric_label
from bench.report.table_specs import TableSpec
from bench.report.tables import NUMBER_COLUMNS, BuiltTable, build_table

READING = ("Read larger as more leakage for every measure but the MSE bound (a larger bound: a more private encoder); "
           "— where a measure does not apply to the defense (the footnote says why). The measures: ")


def build_attack_free_table(table: pd.DataFrame, spec: TableSpec, profile: str | None = None, *,
                            attack_budget: AttackBudget = 1.0) -> BuiltTable:
    """The attack-free table of ``table`` (the module says what it shows)."""
    built = build_table(table, replace(spec, builder=""), profile, attack_budget=attack_budget)
    numbers = built.numbers
    measured = "attack" in numbers and bool(((numbers["attack"] == "none") & numbers["metric"].isin(list(MEASURES))).any())
    if not measured:
        return replace(built, header=[], body=pd.DataFrame(), numbers=pd.DataFrame(columns=NUMBER_COLUMNS), n_factors=0,
                       footnotes=[], notes=[], missing=[f"the attack-free measures ({', '.join(MEASURES)}: none stored)"])
    shown = [m for m in MEASURES if m in set(numbers["metric"])]
    meanings = "; ".join(f"{metric_label(m)}: {MEASURES[m]}" for m in shown)
    rank = "Table LEAKAGE-RANK gives how each measure and the worst case rank these defenses."
    # The measures' headers get the arrow of the better way (bench.report.labels.VICTIM_DIRECTION), as the site's do.
    arrows = {metric_label(m): f"{metric_label(m)} {better_arrow(m)}" for m in MEASURES}
    header = [(group, arrows.get(label, label) if not group else label) for group, label in built.header]
    body = built.body.set_axis([f"{g}: {m}" if g else m for g, m in header], axis=1)
    return replace(built, header=header, body=body, notes=[READING + meanings + ".", rank, *built.notes])
