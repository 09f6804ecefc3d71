"""Leaderboard entries: one JSON object per (profile, dataset, victim, cut, defense and its knobs).

Each entry follows ``entry.schema.json`` (:mod:`bench.site.schema`) and carries everything its
leaderboard row shows and where it came from: the accuracy and bytes per sample of the trained victim,
every attack's privacy metrics (mean ± 95% CI over seeds, diverged runs left out), the worst case
over attacks seed by seed (:mod:`bench.site.worst`: image attacks; the HAR probes on tabular data)
read against the prior's floor (:mod:`bench.report.floor`), each attack's convergence verdict
(:mod:`bench.report.convergence`: four times its budget, seed by seed on the same victims; "unknown"
where that is not stored), flags, its row label and bytes group (:mod:`bench.site.row_labels`,
:mod:`bench.site.ranking`), and the stored record of every cell it summarises with the sha256 of
the record file.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from bench.report.aggregate import config_key
from bench.report.convergence import BUDGET_FACTOR, NOT_CONVERGED, UNKNOWN, UNSTABLE, Convergence
from bench.report.floor import PRIOR, floor_metric, leakage_gap
from bench.report.labels import ci_wider_than_range, privacy_direction, split_scoring
from bench.run.record import FAILED
from bench.site.coverage import attacker_label, missing_board_attacks
from bench.site.leakage import attack_free_json, label_leakage_json
from bench.site.paper import paper_values
from bench.site.ranking import board_position, rank_entries
from bench.site.records import RecordFile
from bench.site.reproduce import code_flags, reproduce_json
from bench.site.row_labels import SETTING_FIELDS, LabelDefaults, defense_row_label, disambiguate, knob_text, row_label
from bench.site.schema import SCHEMA_VERSION
from bench.site.values import as_int, plain, stat
from bench.site.views import ProfileViews, profile_views
from bench.site.worst import seeds_json

BASE_FIELDS = frozenset({"profile", "dataset", "victim", "cut", "defense", *SETTING_FIELDS})
BASELINE_SUFFIXES = ("_black", "_grey")  # the prior's trivial baselines: not its floor
FLAGGED_VERDICTS = (NOT_CONVERGED, UNSTABLE)  # "unknown" is no finding: most budgets have no ×4 stored


def build_entries(table: pd.DataFrame, *, records: Mapping[str, RecordFile], level: float = 0.95,
                  label_defaults: LabelDefaults | None = None) -> list[dict]:
    """Every entry of a tidy table (any profiles, any statuses), ranked per board.

    Args:
        table: the tidy table, one row per (cell, metric).
        records: the record file of every cell of ``table``.
        level: confidence level of the intervals.
        label_defaults: what row labels leave out (default: as the registries declare it).

    Returns:
        Entries in board order (:func:`bench.site.ranking.board_position`): per (profile, dataset,
        victim, cut, setting), by measured bytes group, then most private worst case first.
    """
    if label_defaults is None:
        label_defaults = LabelDefaults.from_registries(table["dataset"].dropna().unique(), table["defense"].dropna().unique())
    entries = []
    for profile in sorted(str(p) for p in table["profile"].dropna().unique()):
        views = profile_views(table[table["profile"] == profile], level=level)
        for key, cells in views.cells.groupby("_key", sort=False):
            entries.append(_entry(dict(zip(views.fields, key)), cells, views, records, label_defaults))
    disambiguate(entries, label_defaults)
    rank_and_flag(entries)
    return sorted(entries, key=board_position)


def rank_and_flag(entries: list[dict]) -> None:
    """Rank the entries per board (:func:`bench.site.ranking.rank_entries`), then turn the counts in
    each entry's ``flags`` into its flags (:func:`entry_flags`), the board's missing attacks among them."""
    rank_entries(entries)
    missing = missing_board_attacks(entries)
    for entry in entries:
        entry["flags"] = entry_flags(entry, **entry["flags"], missing_attacks=missing[id(entry)])


def slug(text: str) -> str:
    """``text`` as a file name part: lower case, ``+`` spelt out, anything but ``[a-z0-9.-]`` a dash."""
    return re.sub(r"[^a-z0-9.-]+", "-", text.lower().replace("+", "-plus-")).strip("-.") or "x"


def _entry(config: dict, cells: pd.DataFrame, views: ProfileViews, records: Mapping[str, RecordFile],
           label_defaults: LabelDefaults) -> dict:
    key = config_key(config, views.fields)
    knobs = {k: v for k, v in config.items() if k not in BASE_FIELDS and v is not None}
    victim = views.victim.get(key, {})
    items = sorted(views.attacks.get(key, {}).items(), key=lambda kv: (kv[0][0], str(kv[0][1])))
    by_settings: dict[tuple, list[dict]] = {}
    for row in cells[[c for c in ("cell_id", "attack", "threat_model", *views.attack_fields) if c in cells.columns]].to_dict("records"):
        by_settings.setdefault((row["attack"], config_key(row, views.attack_fields)), []).append(row)
    attacks = [_attack(config, attack, settings_key, metrics, views, by_settings.get((attack, settings_key), []))
               for (attack, settings_key), metrics in items]
    read = [c for c in ("cell_id", "attack", "seed", "status", "code_version") if c in cells.columns]  # what _record reads
    cell_rows = cells.sort_values(["attack", "seed", "cell_id"])[read].to_dict("records")
    failed = sorted(r["cell_id"] for r in cell_rows if r["status"] == FAILED)
    diverged = sorted(set(cells["cell_id"]) & views.diverged)
    not_learned = sorted(set(cells["cell_id"]) & views.not_learned)
    # A budget below the profile's (a convergence study's ×¼) is short by design: not flagged.
    not_converged = [attacker_label((a["attack"], tuple(sorted(a["settings"].items())))) for a in attacks
                     if a["convergence"]["verdict"] in FLAGGED_VERDICTS and a["convergence"]["budget"] >= 1.0]
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:8]
    knob_slug = "-".join(f"{k}{knob_text(v)}" for k, v in sorted(knobs.items()) if not (k == "lambda_wcc" and v == 0))
    entry = {
        "schema_version": SCHEMA_VERSION,
        "entry_id": slug("-".join(p for p in (config["dataset"], config["profile"], config["defense"], knob_slug, digest) if p)),
        "profile": config["profile"], "dataset": config["dataset"], "victim": config["victim"], "cut": config["cut"],
        "setting": {f: (as_int(config.get(f)) if f == "clients" else plain(config.get(f))) for f in SETTING_FIELDS},
        "defense": {"name": config["defense"], "label": defense_row_label(config["defense"], knobs, label_defaults), "knobs": knobs},
        "code_versions": sorted({str(v) for v in cells.get("code_version", pd.Series(dtype=object)).dropna()}),
        "seeds": sorted({int(s) for s in cells["seed"].dropna()}),
        "records": [_record(r, records[r["cell_id"]]) for r in cell_rows],
        "accuracy": stat(victim.get("accuracy")),
        "accuracy_delta_vs_raw": stat(victim.get("accuracy_delta_vs_raw")),
        "bytes_per_sample": {"up": stat(victim.get("bytes_up_per_sample")), "down": stat(victim.get("bytes_down_per_sample"))},
        "attacks": attacks,
        "worst_case": {m: _worst(config, m, row, views) for m, row in sorted(views.worst.get(key, {}).items())},
        "ranking": {"metric": None, "direction": 0, "value": None, "attack": None, "n": 0, "ranked": False},
        "floor": _floor(config, views),
        "flags": {"failed_cells": failed, "diverged_cells": diverged, "not_learned_cells": not_learned,
                  "not_converged": not_converged},
    }
    entry["label"] = row_label(entry, label_defaults)
    entry["reproduce"] = reproduce_json(entry, records)
    if key in views.dp:
        entry["dp"] = dp_json(views.dp[key])
    attack_free = attack_free_json(views.attack_free.get(key))
    if attack_free:
        entry["attack_free"] = attack_free
    labels = label_leakage_json(attacks, [views.chance.get(key, {}).get(item, {}) for item, _ in items])
    if labels:
        entry["label_leakage"] = labels
    paper = paper_values(entry)
    if paper:
        entry["paper"] = paper
    if "best_val_perplexity" in victim:  # a language model: its utility is perplexity, not accuracy
        entry["perplexity"] = {"best": stat(victim["best_val_perplexity"]), "inflation": stat(victim.get("perplexity_inflation"))}
    return entry


def dp_json(values: Mapping[str, list[float]]) -> dict:
    """A DP entry's guarantee: ε over the whole run and per release (the largest stored: the weakest
    guarantee, null where infinite), δ, and the accountant that computed them."""
    from bench.metrics.privacy import ACCOUNTANT

    def largest(metric: str) -> float | None:
        return plain(max(values[metric])) if values.get(metric) else None

    return {"epsilon_total": largest("dp_epsilon_total"), "epsilon_per_release": largest("dp_epsilon_per_release"),
            "delta": largest("dp_delta"), "accountant": ACCOUNTANT}


def _record(row: Mapping, file: RecordFile) -> dict:
    version = plain(row.get("code_version"))
    return {"cell_id": row["cell_id"], "attack": row["attack"], "seed": int(row["seed"]), "status": row["status"],
            "code_version": str(version) if version is not None else None, "results": file.results, "path": file.path,
            "sha256": file.sha256, "checksum": file.checksum}


def _attack(config: dict, attack: str, settings_key: tuple, metrics: dict, views: ProfileViews, cells: list[dict]) -> dict:
    """One attack configuration of an entry; ``cells``: the records of the entry's rows of ``views.cells``
    with this attack and settings (the columns read here: filtering tables per attack was most of the
    time of building the entries)."""
    key = config_key(config, views.fields)
    settings = views.settings(settings_key)
    headline = views.headlines.get(attack, "")  # none recorded: an unregistered attack's older rows
    budget = float(settings.get("budget", 1.0))
    others = {k: v for k, v in zip(views.attack_fields, settings_key) if k in views.other_settings}
    verdict = views.convergence.get((key, attack, config_key(others, views.other_settings), budget),
                                    Convergence(budget, budget * BUDGET_FACTOR, headline, UNKNOWN))
    threat_models = [plain(r.get("threat_model")) for r in cells]
    return {
        "attack": attack, "settings": settings,
        "threat_model": next((t for t in threat_models if t is not None), None),
        "headline_metric": headline,
        "metrics": {m: stat(row) for m, row in sorted(metrics.items())},
        "cells": sorted(r["cell_id"] for r in cells),
        "convergence": convergence_json(verdict),
    }


def convergence_json(verdict: Convergence) -> dict:
    """A verdict as the entry holds it: the budgets, the verdict and every paired seed's gain."""
    return {"budget": verdict.budget, "larger": verdict.larger, "metric": verdict.metric, "verdict": verdict.verdict,
            "converged": verdict.converged, "unpaired": verdict.unpaired,
            "seeds": [{"seed": g.seed, "victim_key": g.victim_key, "value": g.value, "larger_value": g.larger_value,
                       "gain": g.gain, "tolerance": g.tolerance} for g in verdict.seeds]}


def _worst(config: dict, metric: str, row: Mapping, views: ProfileViews) -> dict:
    settings_key = config_key(row, views.attack_fields)
    base = floor_metric(metric)
    floor_row = views.floor.get(config_key(config, ("dataset", "victim", "cut")), {}).get(base)
    worst_seeds = [s["value"] for s in row.get("seeds", [])]
    prior_seeds = views.prior_seeds.get((config["dataset"], config["victim"], config["cut"], base), [])
    leakage = None
    if worst_seeds and prior_seeds:
        gap, noise = leakage_gap(np.array(worst_seeds), np.array(prior_seeds), metric)
        leakage = {"gap": gap, "noise": noise, "measured": bool(gap > noise)}
    return {"attack": row["attack"], "settings": views.settings(settings_key), "stat": stat(row), "floor_metric": base,
            "floor": stat(floor_row) if floor_row is not None else None, "leakage": leakage,
            "seeds": seeds_json(row, views.settings)}


def entry_flags(entry: dict, *, failed_cells: list, diverged_cells: list, not_learned_cells: list, not_converged: list,
                missing_attacks: list, **_: object) -> dict:
    """The entry's flags: failed and diverged cells, cells whose victim did not learn, unconverged
    attacks, the attacks that set its board's worst cases but that it did not face on every seed
    (:mod:`bench.site.coverage`), a ranking worst case from a single seed or within noise of the
    floor, the metrics whose CI is wider than their whole range, and code from a dirty working tree
    or of several versions (:func:`bench.site.reproduce.code_flags`)."""
    metric = entry["ranking"]["metric"]
    worst = entry["worst_case"].get(metric) if metric else None
    single = bool(worst and worst["stat"]["n"] == 1)
    at_floor = bool(worst and worst["leakage"] is not None and not worst["leakage"]["measured"])
    shown = [("accuracy", entry["accuracy"])] + ([(metric, worst["stat"])] if worst else [])
    wide = [m for m, s in shown if ci_wider_than_range(s["mean"], s["ci95"], m)]
    dirty, mixed = code_flags(entry["code_versions"])
    return {"failed_cells": failed_cells, "diverged_cells": diverged_cells, "not_learned_cells": not_learned_cells,
            "not_converged": not_converged, "missing_attacks": missing_attacks, "single_seed_worst_case": single,
            "not_above_floor": at_floor, "wide_ci": wide, "dirty_code": dirty, "mixed_code_versions": mixed,
            "flagged": bool(failed_cells or diverged_cells or not_learned_cells or not_converged or missing_attacks
                            or single or at_floor or wide or dirty or mixed)}


def _floor(config: dict, views: ProfileViews) -> dict | None:
    rows = views.floor.get(config_key(config, ("dataset", "victim", "cut")), {})
    kept = {m: stat(r) for m, r in sorted(rows.items())
            if privacy_direction(m) and split_scoring(m)[1] not in BASELINE_SUFFIXES}
    return {"attack": PRIOR, "metrics": kept} if kept else None
