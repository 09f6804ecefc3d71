"""Metrics derived across cells, computed in one place: deltas and ratios against the matched raw cell."""
from __future__ import annotations

import pandas as pd

# metric → name of its delta vs the matched raw cell (difference, same units as the metric).
DELTA_METRICS = {"accuracy": "accuracy_delta_vs_raw"}
# metric → name of its ratio to the matched raw cell (App. B-B5: perplexity inflation over Raw).
RATIO_METRICS = {"best_val_perplexity": "perplexity_inflation"}


def add_derived_metrics(table: pd.DataFrame) -> pd.DataFrame:
    """Append ``<metric>_delta_vs_raw`` rows (value minus the matched raw cell's value) and the ratios
    of :data:`RATIO_METRICS` (value over the matched raw cell's value).

    The matched raw cell (``raw_cell_id``, from :meth:`bench.run.cell.Cell.matched_raw`) has the same
    dataset, victim, cut, protocol, heads, partition, clients, attack, profile and seed, with no
    defense and no WCC. Cells whose raw match is absent get no derived row.
    """
    if table.empty:
        return table
    derived = {**{m: (name, lambda a, b: a - b) for m, name in DELTA_METRICS.items()},
               **{m: (name, lambda a, b: a / b) for m, name in RATIO_METRICS.items()}}
    ok = table[(table["status"] == "ok") & table["metric"].isin(list(derived))]
    values = {(r.cell_id, r.metric): r.value for r in ok.itertuples()}
    new_rows = [
        {**row, "metric": derived[row["metric"]][0],
         "value": derived[row["metric"]][1](row["value"], values[(row["raw_cell_id"], row["metric"])])}
        for row in ok.to_dict("records")
        if (row["raw_cell_id"], row["metric"]) in values
    ]
    if not new_rows:
        return table
    return pd.concat([table, pd.DataFrame(new_rows)], ignore_index=True)
