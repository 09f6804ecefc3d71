"""Leaderboard entries: one JSON object per (profile, dataset, victim, cut, defense and its knobs).

Each entry follows ``entry.schema.json`` (:mod:`bench.site.schema`) and carries everything its
leaderboard row shows and where it came from: the accuracy and bytes per sample of the trained victim,
every attack's privacy metrics (mean ± 95% CI over seeds, diverged runs left out), the worst case
over attacks (:func:`bench.report.worst_case.worst_case`: image attacks; the HAR probes on tabular
data) read against the prior's floor (:mod:`bench.report.floor`), each attack's convergence verdict
(:mod:`bench.report.convergence`: four times its budget, seed by seed on the same victims; "unknown"
where that is not stored), flags, and the stored record of every cell it summarises with the sha256
of the record file.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from bench.report.convergence import BUDGET_FACTOR, NOT_CONVERGED, UNKNOWN, UNSTABLE, Convergence
from bench.report.floor import PRIOR, floor_metric, leakage_gap
from bench.report.labels import FACTOR_LABELS, defense_label, privacy_direction, split_scoring
from bench.run.record import FAILED
from bench.site.records import RecordFile
from bench.site.schema import SCHEMA_VERSION
from bench.site.values import as_int, key_of, plain, stat
from bench.site.views import ProfileViews, profile_views

SETTING_FIELDS = ("protocol", "heads", "partition", "alpha", "clients")
BASE_FIELDS = frozenset({"profile", "dataset", "victim", "cut", "defense", *SETTING_FIELDS})
RANKING_METRICS = ("ssim", "median_r2", "reid_accuracy")
BASELINE_SUFFIXES = ("_black", "_grey")  # the prior's trivial baselines: not its floor
FLAGGED_VERDICTS = (NOT_CONVERGED, UNSTABLE)  # "unknown" is no finding: most budgets have no ×4 stored


def build_entries(table: pd.DataFrame, *, records: Mapping[str, RecordFile], level: float = 0.95) -> list[dict]:
    """Every entry of a tidy table (any profiles, any statuses), ranked per (profile, dataset).

    Args:
        table: the tidy table, one row per (cell, metric).
        records: the record file of every cell of ``table``.
        level: confidence level of the intervals.

    Returns:
        Entries in board order: by profile and dataset, then as :func:`rank_entries` leaves them.
    """
    entries = []
    for profile in sorted(str(p) for p in table["profile"].dropna().unique()):
        views = profile_views(table[table["profile"] == profile], level=level)
        for key, cells in views.cells.groupby("_key", sort=False):
            entries.append(_entry(dict(zip(views.fields, key)), cells, views, records))
    rank_entries(entries)
    return sorted(entries, key=lambda e: (e["profile"], e["dataset"], _board_position(e)))


def slug(text: str) -> str:
    """``text`` as a file name part: lower case, ``+`` spelt out, anything but ``[a-z0-9.-]`` a dash."""
    return re.sub(r"[^a-z0-9.-]+", "-", text.lower().replace("+", "-plus-")).strip("-.") or "x"


def knob_text(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def rank_entries(entries: list[dict]) -> None:
    """Set each entry's ``ranking``: per (profile, dataset), the worst case of the first of
    :data:`RANKING_METRICS` any of its entries has (with its privacy direction)."""
    boards: dict[tuple, list[dict]] = {}
    for entry in entries:
        boards.setdefault((entry["profile"], entry["dataset"]), []).append(entry)
    for board in boards.values():
        metric = next((m for m in RANKING_METRICS if any(e["worst_case"].get(m, {}).get("stat", {}).get("mean") is not None
                                                          for e in board)), None)
        for entry in board:
            worst = entry["worst_case"].get(metric) if metric else None
            entry["ranking"] = {"metric": metric, "direction": privacy_direction(metric) if metric else 0,
                                "value": worst["stat"]["mean"] if worst else None, "attack": worst["attack"] if worst else None}


def _board_position(entry: dict) -> tuple:
    """Uncompressed rows first, then by CR; within a CR the most private worst case first, none last."""
    cr = entry["defense"]["knobs"].get("cr")
    value = entry["ranking"]["value"]
    leak = -entry["ranking"]["direction"] * value if value is not None else 0.0
    return (cr is not None, cr or 0.0, value is None, leak, entry["defense"]["label"])


def _entry(config: dict, cells: pd.DataFrame, views: ProfileViews, records: Mapping[str, RecordFile]) -> dict:
    key = key_of(config, views.fields)
    knobs = {k: v for k, v in config.items() if k not in BASE_FIELDS and v is not None}
    victim = views.victim.get(key, {})
    attacks = [_attack(config, attack, settings_key, metrics, views) for (attack, settings_key), metrics
               in sorted(views.attacks.get(key, {}).items(), key=lambda kv: (kv[0][0], str(kv[0][1])))]
    cell_rows = cells.sort_values(["attack", "seed", "cell_id"]).to_dict("records")
    failed = sorted(r["cell_id"] for r in cell_rows if r["status"] == FAILED)
    diverged = sorted(set(cells["cell_id"]) & views.diverged)
    # A budget below the profile's (a convergence study's ×¼) is short by design: not flagged.
    not_converged = [_attack_label(a) for a in attacks
                     if a["convergence"]["verdict"] in FLAGGED_VERDICTS and a["convergence"]["budget"] >= 1.0]
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:8]
    knob_slug = "-".join(f"{k}{knob_text(v)}" for k, v in sorted(knobs.items()) if not (k == "lambda_wcc" and v == 0))
    entry = {
        "schema_version": SCHEMA_VERSION,
        "entry_id": slug("-".join(p for p in (config["dataset"], config["profile"], config["defense"], knob_slug, digest) if p)),
        "profile": config["profile"], "dataset": config["dataset"], "victim": config["victim"], "cut": config["cut"],
        "setting": {f: (as_int(config.get(f)) if f == "clients" else plain(config.get(f))) for f in SETTING_FIELDS},
        "defense": {"name": config["defense"], "label": defense_row_label(config["defense"], knobs), "knobs": knobs},
        "code_versions": sorted({str(v) for v in cells.get("code_version", pd.Series(dtype=object)).dropna()}),
        "seeds": sorted({int(s) for s in cells["seed"].dropna()}),
        "records": [_record(r, records[r["cell_id"]]) for r in cell_rows],
        "accuracy": stat(victim.get("accuracy")),
        "bytes_per_sample": {"up": stat(victim.get("bytes_up_per_sample")), "down": stat(victim.get("bytes_down_per_sample"))},
        "attacks": attacks,
        "worst_case": {m: _worst(config, m, row, views) for m, row in sorted(views.worst.get(key, {}).items())},
        "ranking": {"metric": None, "direction": 0, "value": None, "attack": None},
        "floor": _floor(config, views),
        "flags": {"failed_cells": failed, "diverged_cells": diverged, "not_converged": not_converged,
                  "flagged": bool(failed or diverged or not_converged)},
    }
    if "best_val_perplexity" in victim:  # a language model: its utility is perplexity, not accuracy
        entry["perplexity"] = {"best": stat(victim["best_val_perplexity"]), "inflation": stat(victim.get("perplexity_inflation"))}
    return entry


def defense_row_label(defense: str, knobs: Mapping[str, object]) -> str:
    """``LightSplit-F (CR 8×, λ_WCC=0.1)``: the paper's name and the knobs set (λ_WCC only when not 0)."""
    parts = [f"CR {knob_text(v)}×" if k == "cr" else f"{FACTOR_LABELS.get(k, k)}={knob_text(v)}"
             for k, v in sorted(knobs.items(), key=lambda kv: (kv[0] != "cr", kv[0])) if not (k == "lambda_wcc" and v == 0)]
    return defense_label(defense) + (f" ({', '.join(parts)})" if parts else "")


def _attack_label(item: dict) -> str:
    settings = ", ".join(f"{k}={knob_text(v)}" for k, v in sorted(item["settings"].items()))
    return f"{item['attack']} ({settings})" if settings else item["attack"]


def _record(row: Mapping, file: RecordFile) -> dict:
    return {"cell_id": row["cell_id"], "attack": row["attack"], "seed": int(row["seed"]), "status": row["status"],
            "results": file.results, "path": file.path, "sha256": file.sha256, "checksum": file.checksum}


def _attack(config: dict, attack: str, settings_key: tuple, metrics: dict, views: ProfileViews) -> dict:
    key = key_of(config, views.fields)
    settings = views.settings(settings_key)
    headline = views.headlines.get(attack, "")  # none recorded: an unregistered attack's older rows
    budget = float(settings.get("budget", 1.0))
    others = {k: v for k, v in zip(views.attack_fields, settings_key) if k in views.other_settings}
    verdict = views.convergence.get((key, attack, key_of(others, views.other_settings), budget),
                                    Convergence(budget, budget * BUDGET_FACTOR, headline, UNKNOWN))
    cells = views.cells
    mine = cells[(cells["_key"] == key) & (cells["attack"] == attack)]
    mine = mine[[key_of(r, views.attack_fields) == settings_key for r in mine.to_dict("records")]]
    return {
        "attack": attack, "settings": settings,
        "threat_model": plain(mine["threat_model"].dropna().iloc[0]) if mine["threat_model"].notna().any() else None,
        "headline_metric": headline,
        "metrics": {m: stat(row) for m, row in sorted(metrics.items())},
        "cells": sorted(mine["cell_id"]),
        "convergence": convergence_json(verdict),
    }


def convergence_json(verdict: Convergence) -> dict:
    """A verdict as the entry holds it: the budgets, the verdict and every paired seed's gain."""
    return {"budget": verdict.budget, "larger": verdict.larger, "metric": verdict.metric, "verdict": verdict.verdict,
            "converged": verdict.converged, "unpaired": verdict.unpaired,
            "seeds": [{"seed": g.seed, "victim_key": g.victim_key, "value": g.value, "larger_value": g.larger_value,
                       "gain": g.gain, "tolerance": g.tolerance} for g in verdict.seeds]}


def _worst(config: dict, metric: str, row: Mapping, views: ProfileViews) -> dict:
    settings_key = key_of(row, views.attack_fields)
    base = floor_metric(metric)
    floor_row = views.floor.get(key_of(config, ("dataset", "victim", "cut")), {}).get(base)
    attack_seeds = views.seed_values.get((key_of(config, views.fields), row["attack"], settings_key, metric), [])
    prior_seeds = views.prior_seeds.get((config["dataset"], config["victim"], config["cut"], base), [])
    leakage = None
    if attack_seeds and prior_seeds:
        gap, noise = leakage_gap(np.array(attack_seeds), np.array(prior_seeds), metric)
        leakage = {"gap": gap, "noise": noise, "measured": bool(gap > noise)}
    return {"attack": row["attack"], "settings": views.settings(settings_key), "stat": stat(row), "floor_metric": base,
            "floor": stat(floor_row) if floor_row is not None else None, "leakage": leakage}


def _floor(config: dict, views: ProfileViews) -> dict | None:
    rows = views.floor.get(key_of(config, ("dataset", "victim", "cut")), {})
    kept = {m: stat(r) for m, r in sorted(rows.items())
            if privacy_direction(m) and split_scoring(m)[1] not in BASELINE_SUFFIXES}
    return {"attack": PRIOR, "metrics": kept} if kept else None
