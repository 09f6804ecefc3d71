"""The worst case over attacks: per configuration and metric, the most leaking image attack.

A defense is as private as its strongest attack lets it be. For each trained victim's configuration
(:func:`bench.report.aggregate.victim_fields`: dataset, victim, cut, defense and every defense knob,
``cr`` included) and each privacy metric, the worst case is the seed mean of the attack that leaks
the most: the largest value of a metric where smaller is more private (PRIVACY_DIRECTION −1: SSIM,
PSNR) and the smallest of one where larger is (+1: MSE, LPIPS, masked MSE). Candidates are the
image attacks (:func:`is_image_attack`: not ``none``, not the ``prior`` floor, not a HAR probe),
each with its own settings; the same metric name is compared across them (``ssim`` with ``ssim``,
never with ``ssim_minmax``). A configuration where no candidate has a finite mean keeps one
candidate's row (NaN mean, with its note). Ties go to the first attack name.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

import pandas as pd

from bench.report.aggregate import aggregate, victim_fields
from bench.report.labels import privacy_direction

NOT_IMAGE_ATTACKS = frozenset({"none", "prior"})
HAR_PREFIX = "har-"


def is_image_attack(attack: object) -> bool:
    """Whether an attack competes for the worst case: a reconstruction attack on images, not the
    victim's own cell (``none``), not the floor (``prior``), not a HAR probe (``har-*``)."""
    return isinstance(attack, str) and attack not in NOT_IMAGE_ATTACKS and not attack.startswith(HAR_PREFIX)


def pick_worst(frame: pd.DataFrame, *, value: str, metric: str, group: list[str], attack: str = "attack") -> pd.DataFrame:
    """The row of each group whose ``value`` leaks the most on ``metric`` (NaN values last, ties to
    the first ``attack`` name), in group order.

    Raises:
        ValueError: ``metric`` has no privacy direction.
    """
    direction = privacy_direction(metric)
    if not direction:
        raise ValueError(f"metric '{metric}' has no privacy direction: no worst case")
    ordered = frame.assign(_leak=frame[value] * direction).sort_values(
        [*group, "_leak", attack], na_position="last", kind="stable")
    return ordered.drop_duplicates(group).drop(columns="_leak").reset_index(drop=True)


def worst_case(table: pd.DataFrame, metrics: Iterable[str] | None = None, *, level: float = 0.95,
               candidate: Callable[[object], bool] = is_image_attack) -> pd.DataFrame:
    """The worst case per (victim configuration, metric) over every image attack of ``table``.

    Args:
        table: a tidy table of one profile.
        metrics: the metrics (default: every metric with a privacy direction the attacks recorded);
            metrics without a direction are skipped.
        level: confidence level of the intervals.
        candidate: which attacks compete (default: :func:`is_image_attack`; the site passes the
            HAR probes for tabular data, each the only one recording its metric).

    Returns:
        One row per (configuration, metric): the :func:`victim_fields`, ``metric``, ``attack`` (the
        one that reached it) with its settings' columns, and its statistics as
        :func:`bench.report.aggregate.aggregate` computes them (``mean, ci, n, n_runs, ...``).
    """
    rows = table[table["attack"].map(candidate) & table["metric"].notna()]
    present = list(dict.fromkeys(rows["metric"]))
    wanted = [m for m in (present if metrics is None else metrics) if privacy_direction(m) and m in present]
    if rows.empty or not wanted:
        return pd.DataFrame(columns=[*victim_fields(table), "metric", "attack", "mean", "ci", "n"])
    agg = aggregate(rows, metrics=wanted, level=level)
    fields = victim_fields(agg)
    parts = [pick_worst(agg[agg["metric"] == m], value="mean", metric=m, group=fields) for m in sorted(wanted)]
    return pd.concat(parts, ignore_index=True)
