"""What the templates render: leaderboards of formatted rows, and the sections of each defense's page.

Every value a row shows comes from its entry (:mod:`bench.site.entries`); a row also carries the
number each column sorts by (``sort``), so the page's script never parses formatted text. Links
are relative to the site's root; each template prefixes them with its own way back to it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup

from bench.report.labels import MINUS, better_arrow, metric_label
from bench.site.cells import (  # noqa: F401 - re-exported: the pages' cells
    DASH,
    SINGLE_SEED,
    WIDE_CI,
    Cell,
    bytes_cell,
    delta_cell,
    dp_cell,
    paper_text,
    perplexity_cell,
    stat_text,
)
from bench.site.entries import FLAGGED_VERDICTS, slug
from bench.site.leakage import board_cells as leakage_cells
from bench.site.leakage import board_columns as leakage_columns
from bench.site.markup import inline
from bench.site.ranking import group_ranks
from bench.site.row_labels import LabelDefaults, board_title, by_board, context_parts


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
    def ranking_text(self) -> str:
        """``ranked by worst-case SSIM ↓``, or what a board no attack scored is ordered by."""
        return f"ranked by worst-case {self.metric_text}" if self.metric else "no attack scored its rows (most bytes per sample first)"

    @property
    def columns(self) -> tuple[tuple[str, str, str], ...]:
        """The board's columns (:func:`board_columns`)."""
        return board_columns(self.entries, self.metric)


COLUMNS = (("rank", "Rank in bytes group", "num"), ("defense", "Defense", "text"), ("cr", "CR (measured)", "num"),
           ("accuracy", "Accuracy (%)", "num"), ("accuracy_delta", "Δ accuracy vs raw (pp)", "num"),
           ("bytes_up", "Bytes up / sample", "num"), ("bytes_down", "Bytes down / sample", "num"),
           ("dp", "DP guarantee (ε, δ; accountant)", "num"), ("worst", "Worst case", "num"),
           ("worst_attack", "Worst attack", "text"), ("floor", "Floor (prior)", "num"), ("seeds", "Seeds", "num"),
           ("flags", "Flags", "num"), ("entry", "Entry", "text"))
# The metric whose declared direction (bench.report.labels.better_arrow) each numeric column's arrow
# shows; "worst" and "floor" show the board's metric. The three counts are no metric: rank 1 is the
# best, more seeds and fewer flags make a row more trustworthy.
COLUMN_METRICS = {"cr": "realized_cr", "accuracy": "accuracy", "accuracy_delta": "accuracy_delta_vs_raw",
                  "perplexity": "perplexity_inflation", "bytes_up": "bytes_up_per_sample",
                  "bytes_down": "bytes_down_per_sample", "dp": "dp_epsilon_total", "label": "label_auc_mean",
                  "dcor": "dcor_input_payload"}
COUNT_ARROWS = {"rank": "↓", "seeds": "↑", "flags": "↓"}
WORST_COLUMNS = ("worst", "worst_attack", "floor")  # empty on a board no attack scored


def header(key: str, text: str, metric: str | None) -> str:
    """A column's header with its arrow (``Accuracy (%) ↑``); a text column has none."""
    if key in COUNT_ARROWS:
        return f"{text} {COUNT_ARROWS[key]}"
    shown = metric if key in ("worst", "floor") else COLUMN_METRICS.get(key)
    arrow = better_arrow(shown) if shown else ""
    return f"{text} {arrow}" if arrow else text


def board_columns(entries: list[dict], metric: str | None) -> tuple[tuple[str, str, str], ...]:
    """:data:`COLUMNS` with arrows; on a language-model board perplexity in accuracy's place and no
    Δ accuracy; the DP column only on a board with a DP entry; the worst case, its attack and the
    floor only on a board with an attack metric (``metric``)."""
    lm = any("perplexity" in e for e in entries)
    dp = any("dp" in e for e in entries)
    out = []
    for key, text, kind in COLUMNS:
        if (key == "accuracy_delta" and lm) or (key == "dp" and not dp) or (key in WORST_COLUMNS and metric is None):
            continue
        if key == "accuracy" and lm:
            key, text = "perplexity", "Perplexity (× raw)"
        if key == "seeds":  # the label leakage and dCor (bench.site.leakage), on a board that has them
            out += [(k, header(k, t, metric), kind) for k, t, kind in leakage_columns(entries)]
        out.append((key, header(key, text, metric), kind))
    return tuple(out)


def defense_href(name: str) -> str:
    return f"defenses/{slug(name)}.html"


def attack_href(name: str) -> str:
    return f"attacks/{slug(name)}.html"


def entry_href(entry_id: str) -> str:
    return f"entries/{entry_id}.html"


def settings_text(settings: dict, defaults: dict | None = None) -> str:
    """``budget=4, precision=bfloat16``: the settings, those at their knob's default (``defaults``) left out."""
    defaults = defaults or {}
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(settings.items())
                     if k not in defaults or defaults[k] != v)


def docstring_markup(text: str) -> Markup:
    """Docstring text as HTML (:func:`bench.site.markup.inline`: escaped; code, roles, emphasis)."""
    return inline(text)


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
    if flags["not_learned_cells"]:
        texts.append(f"{len(flags['not_learned_cells'])} with the victim at chance")
    texts += [f"not faced: {item}" for item in flags["missing_attacks"]]
    if flags["dirty_code"]:
        texts.append("code with uncommitted changes (-dirty)")
    if flags["mixed_code_versions"]:
        texts.append(f"{len(entry['code_versions'])} code versions")
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
    out = []
    for mine in by_board(entries).values():
        first = mine[0]
        board = Board(id=slug("-".join([first["dataset"], first["profile"], *context_parts(first, LabelDefaults(victims={}))])),
                      title=board_title(first), profile=first["profile"], dataset=first["dataset"],
                      metric=first["ranking"]["metric"], entries=mine)
        board.rows.extend(row(entry, rank=rank, defaults=defaults or {}) for entry, rank in zip(mine, group_ranks(mine)))
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
        "accuracy_delta": delta_cell(entry.get("accuracy_delta_vs_raw")),
        "perplexity": perplexity_cell(entry.get("perplexity"), paper_text(entry, "none", "perplexity_inflation")),
        "dp": dp_cell(entry.get("dp")),
        "bytes_up": bytes_cell(entry["bytes_per_sample"]["up"]),
        "bytes_down": bytes_cell(entry["bytes_per_sample"]["down"]),
        "worst": worst_cell, "worst_attack": attack_cell, "floor": floor_cell, **leakage_cells(entry),
        "seeds": seeds_cell(entry),
        "flags": Cell("; ".join(flags) or "ok", len(flags)),
        "entry": Cell("page", entry["entry_id"], href=entry_href(entry["entry_id"])),
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


def attack_columns(metric: str) -> tuple[tuple[str, str, str], ...]:
    """:data:`ATTACK_COLUMNS` with the headline metric's arrow on its column."""
    return tuple((k, header("worst", text, metric) if k == "headline" else text, kind) for k, text, kind in ATTACK_COLUMNS)


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
                "headline": Cell(f"{metric_label(metric)} {stat_text(stat, metric)}"
                                 + (paper_text(entry, attack, metric) if float(item["settings"].get("budget", 1.0)) == 1.0 else ""),
                                 (stat or {}).get("mean")),
                "converged": Cell(converged),
                "worst": Cell("yes" if is_worst else "", "1" if is_worst else ""),
            })
    return rows
