"""Small tidy tables made by hand for the table content tests.

A configuration is given as one value per seed for each metric; the values are chosen so that every
number a table shows (mean, Student-t 95% CI half-width, change vs Raw) can be worked out by hand.
"""
from __future__ import annotations

import pandas as pd

from bench.run.cell import Cell
from bench.run.store import OK, CellRecord, records_to_table

SEEDS = (0, 1, 2)


def runs(attack: str, defense: str = "raw", *, values: dict[str, tuple[float | None, ...]], cut: str = "split-2",
         lambda_wcc: float = 0.0, diverged_seed: int | None = None, notes: dict[str, str] | None = None,
         setting: dict | None = None, **knobs: float) -> list[CellRecord]:
    """One stored record per seed of one configuration.

    Args:
        attack: the cells' attack.
        defense: the cells' defense.
        values: metric → its value at seeds 0, 1, 2 (``None``: missing, with its reason in ``notes``).
        cut: the victim's cut.
        lambda_wcc: the WCC weight.
        diverged_seed: the seed whose run is marked diverged (every run records ``diverged`` then).
        notes: metric → the stored reason of a missing value.
        setting: other Cell fields (``clients``, ``heads``, ``partition``, ``alpha``).
        **knobs: the defense's knobs (``cr``, ``sigma``).
    """
    out = []
    for i, seed in enumerate(SEEDS):
        cell = Cell(dataset="mnist", victim="mnistnet", cut=cut, defense=defense, profile="cpu", seed=seed,
                    lambda_wcc=lambda_wcc, attack=attack, defense_knobs=knobs, **(setting or {}))
        metrics = {metric: per_seed[i] for metric, per_seed in values.items()}
        if diverged_seed is not None:
            metrics["diverged"] = float(seed == diverged_seed)
        out.append(CellRecord(cell, OK, metrics=metrics, notes=dict(notes or {})))
    return out


def tidy(*groups: list[CellRecord]) -> pd.DataFrame:
    """The tidy table of the given configurations, as the store collects it."""
    return records_to_table([record for group in groups for record in group])
