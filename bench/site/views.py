"""The statistics of one profile's tidy table, computed once and looked up by each entry's configuration.

A configuration is a trained victim's: :func:`bench.report.aggregate.victim_fields` (profile, dataset,
victim, cut, defense, every defense knob, the setting). Every lookup table here is keyed by the
values of those fields (:func:`bench.report.aggregate.config_key`), so the victim's utility, each attack's
metrics, the worst case and the failed cells of one configuration meet in one entry.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import pandas as pd

from bench.leakage.names import MEASURES
from bench.report.aggregate import (
    aggregate,
    config_fields,
    config_key,
    diverged_cells,
    not_learned_cells,
    numeric_factors,
    ok_rows,
    victim_fields,
    victim_view,
)
from bench.report.convergence import judge_cells
from bench.report.floor import FLOOR_KEYS, prior_floor, prior_seed_values
from bench.report.label_table import CHANCE
from bench.report.labels import privacy_direction
from bench.report.worst_case import IMAGE, TABULAR
from bench.run.table import ATTACK_KNOB_PREFIX, headline_metrics
from bench.site.worst import seed_worst_rows

VICTIM_STATS = ("accuracy", "accuracy_delta_vs_raw", "bytes_up_per_sample", "bytes_down_per_sample", "best_val_perplexity",
                "perplexity_inflation")
DP_METRICS = ("dp_epsilon_total", "dp_epsilon_per_release", "dp_delta")  # bench.metrics.privacy.dp_metrics


@dataclass
class ProfileViews:
    """Lookups over one profile's table.

    Attributes:
        fields: the configuration's fields.
        attack_fields: the attack settings' columns (``attack_budget``, ...).
        headlines: ``{attack: headline metric}`` as its rows recorded it.
        cells: one row per stored cell (any status), with its configuration key under ``_key``.
        victim: ``{key: {metric: aggregate row}}`` of :data:`VICTIM_STATS`.
        attacks: ``{key: {(attack, settings key): {metric: aggregate row}}}`` of every privacy metric.
        worst: ``{key: {metric: worst-case row}}``, over the image attacks and over the tabular ones
            (the HAR probes, each the only one recording its metric): the strongest attack seed by
            seed (:func:`bench.site.worst.seed_worst_rows`, its winners under ``seeds``).
        floor: ``{(dataset, victim, cut): {metric: floor row}}``.
        prior_seeds: ``{(dataset, victim, cut, metric): finite per-seed values}``.
        diverged: ids of the cells whose ``diverged`` metric is 1.
        not_learned: ids of the cells whose victim did not learn (accuracy within noise of chance;
            :func:`bench.report.aggregate.not_learned_cells`).
        convergence: ``{(key, attack, key of the settings but the budget, budget): Convergence}`` of every
            budget stored (:func:`bench.report.convergence.judge_cells`: seed by seed on the same victims).
        dp: ``{key: {metric: sorted distinct finite values}}`` of :data:`DP_METRICS` over the
            configuration's cells (one value each: ε depends on σ and the epochs only).
        attack_free: ``{key: {measure: aggregate row}}`` of the victim's attack-free measures
            (:data:`bench.leakage.names.MEASURES`).
        chance: ``{key: {(attack, settings key): {metric: aggregate row}}}`` of the label attacks'
            chance levels (:data:`bench.report.label_table.CHANCE`).
    """

    fields: list[str]
    attack_fields: list[str]
    cells: pd.DataFrame
    headlines: dict = field(default_factory=dict)
    victim: dict = field(default_factory=dict)
    attacks: dict = field(default_factory=lambda: defaultdict(dict))
    worst: dict = field(default_factory=lambda: defaultdict(dict))
    floor: dict = field(default_factory=lambda: defaultdict(dict))
    prior_seeds: dict = field(default_factory=dict)
    diverged: set = field(default_factory=set)
    not_learned: set = field(default_factory=set)
    convergence: dict = field(default_factory=dict)
    dp: dict = field(default_factory=dict)
    attack_free: dict = field(default_factory=dict)
    chance: dict = field(default_factory=lambda: defaultdict(dict))

    @property
    def other_settings(self) -> list[str]:
        """The attack settings' columns but the budget: what a convergence verdict compares alike."""
        return [c for c in self.attack_fields if c != ATTACK_KNOB_PREFIX + "budget"]

    def settings(self, settings_key: tuple) -> dict:
        """An attack's settings as a mapping, unset ones left out (``{"budget": 1.0}``)."""
        return {c[len(ATTACK_KNOB_PREFIX):]: v for c, v in zip(self.attack_fields, settings_key) if v is not None}


def profile_views(table: pd.DataFrame, *, level: float = 0.95) -> ProfileViews:
    """Every lookup of one profile's tidy table (failed cells included in ``cells``)."""
    table = numeric_factors(table, config_fields(table))
    ok = ok_rows(table)
    fields = victim_fields(table)
    attack_fields = [c for c in config_fields(table) if c.startswith(ATTACK_KNOB_PREFIX)]
    cells = table.drop_duplicates("cell_id").copy()
    cells["_key"] = [config_key(r, fields) for r in cells.to_dict("records")]
    views = ProfileViews(fields=fields, attack_fields=attack_fields, cells=cells, headlines=headline_metrics(table),
                         diverged=diverged_cells(table), not_learned=not_learned_cells(table))
    if ok.empty:
        return views
    victims = victim_view(table)
    for row in aggregate(victims, metrics=VICTIM_STATS, level=level).to_dict("records"):
        views.victim.setdefault(config_key(row, fields), {})[row["metric"]] = row
    for row in aggregate(victims, metrics=list(MEASURES), level=level).to_dict("records"):
        views.attack_free.setdefault(config_key(row, fields), {})[row["metric"]] = row
    dp_rows = ok[ok["metric"].isin(DP_METRICS)].dropna(subset=["value"])
    for row in dp_rows.to_dict("records"):
        values = views.dp.setdefault(config_key(row, fields), {}).setdefault(row["metric"], [])
        if float(row["value"]) not in values:
            values.append(float(row["value"]))
    for metrics in views.dp.values():
        for values in metrics.values():
            values.sort()
    attacked = ok[ok["attack"] != "none"]  # the diverged metric stays in: aggregate leaves those runs out
    metrics = sorted(m for m in attacked["metric"].unique() if privacy_direction(m))
    if metrics:
        for row in aggregate(attacked, metrics=metrics, level=level).to_dict("records"):
            slot = views.attacks[config_key(row, fields)].setdefault((row["attack"], config_key(row, attack_fields)), {})
            slot[row["metric"]] = row
    chance = [m for m in CHANCE.values() if m in set(attacked["metric"])]
    for row in (aggregate(attacked, metrics=chance, level=level).to_dict("records") if chance else []):
        views.chance[config_key(row, fields)].setdefault((row["attack"], config_key(row, attack_fields)), {})[row["metric"]] = row
    for kind in (IMAGE, TABULAR):  # seed by seed; the seed-mean pick only where no seed has a value (its note)
        for key, rows in seed_worst_rows(table, fields=fields, attack_fields=attack_fields, kind=kind, level=level).items():
            views.worst[key].update(rows)
    for row in prior_floor(table, level=level).to_dict("records"):
        views.floor[config_key(row, FLOOR_KEYS)][row["metric"]] = row
    for row in prior_seed_values(table).dropna(subset=["value"]).to_dict("records"):
        views.prior_seeds.setdefault(config_key(row, (*FLOOR_KEYS, "metric")), []).append(float(row["value"]))
    for row in judge_cells(attacked, by=[*fields, *views.other_settings]).to_dict("records"):
        settings = config_key(row, views.other_settings)
        views.convergence[(config_key(row, fields), row["attack"], settings, row["budget"])] = row["convergence"]
    return views

