"""Formatted table cells: a value as the site shows it, with the number it sorts by.

Each takes a part of an entry (:mod:`bench.site.entries`) and returns a :class:`Cell`; the
leaderboards and pages (:mod:`bench.site.pages`) put them in rows.
"""
from __future__ import annotations

from dataclasses import dataclass

from bench.report.labels import ci_wider_than_range, number

DASH = "—"
SINGLE_SEED = "(1 seed)"
WIDE_CI = "(CI wider than its range)"


@dataclass
class Cell:
    """One table cell: the text shown, the value it sorts by (None: sorts last), a link, a hover title."""

    text: str
    sort: float | str | None = None
    href: str | None = None
    title: str | None = None


def stat_text(stat: dict | None, metric: str) -> str:
    """``mean ± ci`` in the metric's display units (``—`` without a mean; a single seed's value,
    which has no interval, marked ``(1 seed)``; an interval wider than the metric's whole range
    marked ``(CI wider than its range)``)."""
    if not stat or stat["mean"] is None:
        return DASH
    text = number(stat["mean"], metric)
    if stat["ci95"] is not None:
        wide = f" {WIDE_CI}" if ci_wider_than_range(stat["mean"], stat["ci95"], metric) else ""
        return text + f" ± {number(stat['ci95'], metric)}" + wide
    return text + (f" {SINGLE_SEED}" if stat["n"] == 1 else "")


def perplexity_cell(perplexity: dict | None, paper: str = "") -> Cell:
    """``best ± ci (×inflation)``, sorted by the best perplexity (``—`` for an entry without one);
    ``paper``: the paper's inflation beside it (:func:`paper_text`)."""
    if not perplexity or perplexity["best"]["mean"] is None:
        return Cell(DASH)
    best, inflation = perplexity["best"], perplexity["inflation"]["mean"]
    text = stat_text(best, "best_val_perplexity")
    if inflation is not None:
        text += f" (×{number(inflation, 'perplexity_inflation')}{paper})"
    return Cell(text, best["mean"])


def delta_cell(stat: dict | None) -> Cell:
    """Δ accuracy vs the matched raw victim in percentage points, signed, ± its CI."""
    if not stat or stat["mean"] is None:
        return Cell(DASH)
    text = number(stat["mean"], "accuracy", signed=True)
    if stat["ci95"] is not None:
        text += f" ± {number(stat['ci95'], 'accuracy')}"
    return Cell(text, stat["mean"], title="accuracy minus the matched raw victim's, seed by seed (bench.run.derived)")


def epsilon_text(epsilon: float | None) -> str:
    return "∞" if epsilon is None else f"{epsilon:,.0f}" if epsilon >= 100 else f"{epsilon:.3g}"


def dp_cell(dp: dict | None) -> Cell:
    """``ε = 93,612, δ = 1e-05 (Opacus RDP accountant)`` for a DP entry (sorted by ε), else ``no DP``."""
    if not dp:
        return Cell("no DP")
    accountant = dp["accountant"].split(" (")[0]
    delta = f"{dp['delta']:g}" if dp["delta"] is not None else DASH
    return Cell(f"ε = {epsilon_text(dp['epsilon_total'])}, δ = {delta} ({accountant})", dp["epsilon_total"],
                title=f"over the whole run; per release ε = {epsilon_text(dp['epsilon_per_release'])}; {dp['accountant']}")


def paper_text(entry: dict, attack: str, metric: str) -> str:
    """``; paper 0.830 (Table X)``: the paper's value for the entry's configuration under ``attack``
    and ``metric`` (:mod:`bench.site.paper`), empty where it reports none."""
    values = [p for p in entry.get("paper", []) if p["attack"] == attack and p["metric"] == metric]
    return "".join(f"; paper {number(p['value'], metric)} ({p['where']})" for p in values)


def bytes_cell(stat: dict) -> Cell:
    mean = stat["mean"]
    return Cell(DASH if mean is None else f"{mean:,.0f}", mean)
