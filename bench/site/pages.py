"""What the templates render: leaderboards of formatted rows, and the sections of each defense's page.

Every value a row shows comes from its entry (:mod:`bench.site.entries`); a row also carries the
number each column sorts by (``sort``), so the page's script never parses formatted text. Links
are relative to the site's root; each template prefixes them with its own way back to it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from bench.report.labels import MINUS, ci_wider_than_range, metric_label, number
from bench.site.entries import FLAGGED_VERDICTS, slug
from bench.site.ranking import group_of
from bench.site.row_labels import LabelDefaults, board_key, board_title, context_parts

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


@dataclass
class Board:
    """One leaderboard: a (profile, dataset, victim, cut, setting)'s entries in ranking order."""

    id: str
    title: str
    profile: str
    dataset: str
    metric: str | None
    entries: list[dict]
    rows: list[dict[str, Cell]] = field(default_factory=list)

    @property
    def metric_text(self) -> str:
        return metric_label(self.metric) if self.metric else "no attack metric"

    @property
    def columns(self) -> tuple[tuple[str, str, str], ...]:
        """:data:`COLUMNS`, with perplexity in accuracy's place on a language-model board."""
        return LM_COLUMNS if any("perplexity" in e for e in self.entries) else COLUMNS


COLUMNS = (("rank", "Rank in bytes group", "num"), ("defense", "Defense", "text"), ("cr", "CR (measured)", "num"),
           ("accuracy", "Accuracy (%)", "num"), ("bytes_up", "Bytes up / sample", "num"),
           ("bytes_down", "Bytes down / sample", "num"), ("worst", "Worst case", "num"),
           ("worst_attack", "Worst attack", "text"), ("floor", "Floor (prior)", "num"), ("seeds", "Seeds", "num"),
           ("flags", "Flags", "num"), ("entry", "Entry", "text"))
LM_COLUMNS = tuple(("perplexity", "Perplexity (× raw)", "num") if key == "accuracy" else (key, header, kind)
                   for key, header, kind in COLUMNS)


def defense_href(name: str) -> str:
    return f"defenses/{slug(name)}.html"


def attack_href(name: str) -> str:
    return f"attacks/{slug(name)}.html"


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


def perplexity_cell(perplexity: dict | None) -> Cell:
    """``best ± ci (×inflation)``, sorted by the best perplexity (``—`` for an entry without one)."""
    if not perplexity or perplexity["best"]["mean"] is None:
        return Cell(DASH)
    best, inflation = perplexity["best"], perplexity["inflation"]["mean"]
    text = stat_text(best, "best_val_perplexity")
    if inflation is not None:
        text += f" (×{number(inflation, 'perplexity_inflation')})"
    return Cell(text, best["mean"])


def bytes_cell(stat: dict) -> Cell:
    mean = stat["mean"]
    return Cell(DASH if mean is None else f"{mean:,.0f}", mean)


def settings_text(settings: dict, defaults: dict | None = None) -> str:
    """``budget=4, precision=bfloat16``: the settings, those at their knob's default (``defaults``) left out."""
    defaults = defaults or {}
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(settings.items())
                     if k not in defaults or defaults[k] != v)


def docstring_markup(text: str) -> Markup:
    """Docstring text as HTML: escaped, with ````literal```` and ``:role:`name``` as code."""
    return Markup(re.sub(r"``(.+?)``|:\w+:`(.+?)`", lambda m: f"<code>{m.group(1) or m.group(2)}</code>", str(escape(text))))


def flag_texts(entry: dict, defaults: dict[str, dict] | None = None) -> list[str]:
    """The entry's flags as short texts (the attacks not converged with their settings off their defaults)."""
    flags = entry["flags"]
    texts = []
    if flags["not_above_floor"]:
        texts.append("worst case not above floor")
    if flags["single_seed_worst_case"]:
        texts.append("worst case from 1 seed")
    texts += [f"CI wider than the range of {m}" for m in flags["wide_ci"]]
    if flags["failed_cells"]:
        texts.append(f"{len(flags['failed_cells'])} failed")
    if flags["diverged_cells"]:
        texts.append(f"{len(flags['diverged_cells'])} diverged")
    for item in entry["attacks"]:  # the items behind flags["not_converged"], with shorter settings
        verdict = item["convergence"]
        if verdict["verdict"] in FLAGGED_VERDICTS and verdict["budget"] >= 1.0:
            settings = settings_text(item["settings"], {k: v for k, v in (defaults or {}).get(item["attack"], {}).items()
                                                        if k != "budget"})
            texts.append(f"{verdict['verdict']}: {item['attack']}" + (f" ({settings})" if settings else ""))
    return texts


def boards(entries: list[dict], *, defaults: dict[str, dict] | None = None) -> list[Board]:
    """One board per (profile, dataset, victim, cut, setting) (:func:`bench.site.row_labels.board_key`),
    entries in the order :func:`bench.site.entries.build_entries` ranked them, each row formatted
    with its rank within its bytes group (``defaults``: each attack's knob defaults, settings at
    which are not shown)."""
    grouped: dict[tuple, list[dict]] = {}
    for entry in entries:
        grouped.setdefault(board_key(entry), []).append(entry)
    out = []
    for mine in grouped.values():
        first = mine[0]
        board = Board(id=slug("-".join([first["dataset"], first["profile"], *context_parts(first, LabelDefaults(victims={}))])),
                      title=board_title(first), profile=first["profile"], dataset=first["dataset"],
                      metric=first["ranking"]["metric"], entries=mine)
        ranks: dict[object, int] = {}
        for entry in mine:
            group = group_of(entry)
            rank = None
            if entry["ranking"]["value"] is not None:
                rank = ranks[group] = ranks.get(group, 0) + 1
            board.rows.append(row(entry, rank=rank, defaults=defaults or {}))
        out.append(board)
    return out


def cr_cell(entry: dict) -> Cell:
    """``16× (measured 8×)`` for a row whose bytes say another CR than its knob, else the CR; sorted
    by the measured CR (uncompressed rows as 1)."""
    group = entry["bytes_group"]
    nominal, measured = group["nominal_cr"], group["measured_cr"]
    text = f"{nominal:g}×" if nominal is not None else "none"
    title = None
    if group["matches_nominal"] is False:
        text += f" (measured {measured:.3g}×)"
        title = f"sends {group['bytes']:,.0f} B per sample up + down: {measured:.3g}× fewer than uncompressed, not {nominal or 1:g}×"
    return Cell(text, measured if measured is not None else (nominal or 1.0), title=title)


def attack_text(attack: str, settings: dict, defaults: dict[str, dict]) -> str:
    """``sdar (budget=4)``: the attack with its settings off their defaults."""
    text = settings_text(settings, defaults.get(attack))
    return attack + (f" ({text})" if text else "")


def row(entry: dict, *, rank: int | None, defaults: dict[str, dict]) -> dict[str, Cell]:
    """One leaderboard row of ``entry``."""
    ranking = entry["ranking"]
    metric = ranking["metric"]
    worst = entry["worst_case"].get(metric) if metric else None
    flags = flag_texts(entry, defaults)
    worst_cell, attack_cell, floor_cell = Cell(DASH), Cell(DASH), Cell(DASH)
    if worst is not None:
        leakage = worst["leakage"]
        unmeasured = leakage is not None and not leakage["measured"]
        named = attack_text(worst["attack"], worst["settings"], defaults)
        winners = [(s["seed"], attack_text(s["attack"], s["settings"], defaults)) for s in worst["seeds"]]
        listed = ", ".join(f"seed {seed}: {text}" for seed, text in winners)
        worst_cell = Cell(stat_text(worst["stat"], metric) + (" (not above floor)" if unmeasured else ""), worst["stat"]["mean"],
                          title=("within noise of the prior's floor: no leakage measured; " if unmeasured else "")
                          + f"strongest attack per seed ({listed or 'none'})")
        won = sum(text == named for _, text in winners)
        share = f" on {won} of {len(winners)} seeds" if won < len(winners) else ""
        attack_cell = Cell(named + share, worst["attack"], href=attack_href(worst["attack"]))
        floor_cell = Cell(stat_text(worst["floor"], worst["floor_metric"]), (worst["floor"] or {}).get("mean"))
    accuracy = entry["accuracy"]
    return {
        "rank": Cell(str(rank) if rank else DASH, rank),
        "defense": Cell(entry["label"], entry["label"], href=defense_href(entry["defense"]["name"])),
        "cr": cr_cell(entry),
        "accuracy": Cell(stat_text(accuracy, "accuracy"), accuracy["mean"]),
        "perplexity": perplexity_cell(entry.get("perplexity")),
        "bytes_up": bytes_cell(entry["bytes_per_sample"]["up"]),
        "bytes_down": bytes_cell(entry["bytes_per_sample"]["down"]),
        "worst": worst_cell, "worst_attack": attack_cell, "floor": floor_cell,
        "seeds": seeds_cell(entry),
        "flags": Cell("; ".join(flags) or "ok", len(flags)),
        "entry": Cell("JSON", entry["entry_id"], href=f"entries/{entry['entry_id']}.json"),
    }


def seeds_cell(entry: dict) -> Cell:
    """The seeds the ranking's worst case is the mean of (``2 of 3`` where fewer than the entry stores)."""
    used, stored = entry["ranking"]["n"], len(entry["seeds"])
    if entry["ranking"]["value"] is None:
        used = entry["accuracy"]["n"] or stored
    return Cell(str(used) if used == stored else f"{used} of {stored}", used,
                title="seeds the worst case is the mean of, of the seeds stored" if used != stored else None)


@dataclass
class GridGroup:
    """The reconstruction grids of one attack (and settings) on one dataset: raw's first where stored
    (same attack, settings and seed), then one per entry of the defense.

    Attributes:
        figures: ``(caption, image path relative to the site)``.
    """

    attack: str
    settings: str
    dataset: str
    figures: list[tuple[str, str]] = field(default_factory=list)


ATTACK_COLUMNS = (("board", "Board", "text"), ("defense", "Defense", "text"), ("settings", "Settings", "text"),
                  ("headline", "Headline metric", "num"), ("converged", "Converged at this budget", "text"),
                  ("worst", "Worst case of its row", "text"))


def convergence_text(verdict: dict) -> str:
    """``unstable (×16 gains +0.066, +0.080, −0.127 on seeds 0, 1, 2; tolerance 0.02)`` from an entry's verdict."""
    if not verdict["seeds"]:
        return f"{verdict['verdict']} (×{verdict['larger']:g} not stored on its seeds)"
    gains = ", ".join(f"{g['gain']:+.3f}".replace("-", MINUS) for g in verdict["seeds"])
    seeds = ", ".join(str(g["seed"]) for g in verdict["seeds"])
    allowed = ", ".join(dict.fromkeys(f"{g['tolerance']:.3g}" for g in verdict["seeds"]))
    unpaired = f"; {verdict['unpaired']} without ×{verdict['larger']:g}" if verdict["unpaired"] else ""
    plural = "s" * (len(verdict["seeds"]) != 1)
    return f"{verdict['verdict']} (×{verdict['larger']:g} gains {gains} on seed{plural} {seeds}; tolerance {allowed}{unpaired})"


def attack_rows(entries: list[dict], attack: str, *, defaults: dict | None = None) -> list[dict[str, Cell]]:
    """The attack's headline metric on every entry that stores it, one row per settings."""
    rows = []
    for entry in entries:
        worst = entry["worst_case"].get(entry["ranking"]["metric"] or "")
        for item in entry["attacks"]:
            if item["attack"] != attack:
                continue
            metric = item["headline_metric"]
            converged = convergence_text(item["convergence"])
            is_worst = worst is not None and worst["attack"] == attack and worst["settings"] == item["settings"]
            stat = item["metrics"].get(metric)
            rows.append({
                "board": Cell(board_title(entry)),
                "defense": Cell(entry["label"], entry["label"], href=defense_href(entry["defense"]["name"])),
                "settings": Cell(settings_text(item["settings"], defaults) or DASH),
                "headline": Cell(f"{metric_label(metric)} {stat_text(stat, metric)}", (stat or {}).get("mean")),
                "converged": Cell(converged),
                "worst": Cell("yes" if is_worst else "", "1" if is_worst else ""),
            })
    return rows
