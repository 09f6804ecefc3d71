"""What an entry's own page shows (``entries/<entry_id>.html``): its leaderboard row, every attack,
its label leakage and attack-free measures (:mod:`bench.site.leakage`), the paper's numbers beside
the measured ones, the DP guarantee, how to reproduce it and its code."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from bench.report.labels import metric_label, number
from bench.site.cells import DASH, Cell, epsilon_text, paper_text, stat_text
from bench.site.leakage import attack_free_rows, label_rows
from bench.site.pages import Board, attack_href, convergence_text, defense_href, header, settings_text

ENTRY_ATTACK_COLUMNS = (("attack", "Attack", "text"), ("settings", "Settings", "text"),
                        ("headline", "Headline metric (paper beside it where reported)", "text"),
                        ("converged", "Converged at this budget", "text"))


def entry_attack_rows(entry: dict, defaults: dict[str, dict]) -> list[dict[str, Cell]]:
    """One row per attack (and settings) of the entry: its headline metric with its arrow, ± CI, and
    the paper's value where it reports one (at the default budget)."""
    rows = []
    for item in entry["attacks"]:
        metric = item["headline_metric"]
        stat = item["metrics"].get(metric)
        paper = paper_text(entry, item["attack"], metric) if float(item["settings"].get("budget", 1.0)) == 1.0 else ""
        rows.append({
            "attack": Cell(item["attack"], item["attack"], href=attack_href(item["attack"])),
            "settings": Cell(settings_text(item["settings"], defaults.get(item["attack"])) or DASH),
            "headline": Cell(f"{metric_label(metric)} {stat_text(stat, metric)}{paper}" if metric else DASH,
                             (stat or {}).get("mean")),
            "converged": Cell(convergence_text(item["convergence"])),
        })
    return rows


def paper_rows(entry: dict) -> list[dict[str, str]]:
    """The paper's values for the entry's configuration, each beside the measurement, with a note
    where the entry's profile is not one the claim is checked on."""
    rows = []
    for p in entry.get("paper", []):
        metric = p["metric"]
        note = "" if entry["profile"] in p["profiles"] else (
            f"the paper's scale is the {' or '.join(p['profiles'])} profile; this entry ran {entry['profile']}")
        rows.append({"text": p["text"], "where": p["where"], "value": f"{metric_label(metric)} {number(p['value'], metric)}",
                     "measured": f"{metric_label(metric)} {stat_text(p['measured'], metric)}", "note": note})
    return rows


def grid_file_blocks(entry: dict) -> list[dict[str, str]]:
    """Each grid file the entry's results folders hold: its path and text."""
    return [{"path": path, "text": Path(path).read_text(encoding="utf-8")} for path in entry["reproduce"]["grid_files"]
            if Path(path).is_file()]


def code_version_counts(entry: dict) -> list[tuple[str, int]]:
    """``[(code version, number of records)]``, the most common first (``unknown`` for a record without one)."""
    return Counter(r.get("code_version") or "unknown" for r in entry["records"]).most_common()


def entry_page_values(entry: dict, *, board: Board, row: dict[str, Cell], defaults: dict[str, dict]) -> dict:
    """The values ``entry.html.j2`` renders for ``entry`` (its ``board`` and its ``row`` on it)."""
    dp = entry.get("dp")
    metric = next((i["headline_metric"] for i in entry["attacks"] if i["headline_metric"]), None)
    columns = tuple((k, header("worst", text, metric) if k == "headline" and metric else text, kind)
                    for k, text, kind in ENTRY_ATTACK_COLUMNS)
    return {
        "entry": entry, "board": board, "row": row, "defense_href": defense_href(entry["defense"]["name"]),
        "attack_columns": columns, "attack_rows": entry_attack_rows(entry, defaults), "paper": paper_rows(entry),
        "dp": {"total": epsilon_text(dp["epsilon_total"]), "per_release": epsilon_text(dp["epsilon_per_release"]),
               "delta": f"{dp['delta']:g}" if dp["delta"] is not None else DASH, "accountant": dp["accountant"]} if dp else None,
        "grid_files": grid_file_blocks(entry), "versions": code_version_counts(entry),
        "label_rows": label_rows(entry), "attack_free_rows": attack_free_rows(entry),
    }
