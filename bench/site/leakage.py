"""An entry's label leakage and attack-free measures: as its JSON holds them, as its page's sections
and as the board's two columns show them (issue 42).

- ``attack_free``: the trained client's measures (:data:`bench.leakage.names.MEASURES`), mean ± CI
  over seeds, the stored reason where one does not apply.
- ``label_leakage``: per label attack and setting, at the default of every knob that tunes the
  attacker, the label metrics :func:`bench.report.label_table.shown_label_metrics` picks (as Table
  LABELS does), each beside the chance level of the same cells.

On a board, "Worst label AUC" is the entry's worst case on ``label_auc_mean`` (seed by seed, like
every worst case of the site) and "dCor" its distance correlation; each column shows only on a
board where some entry has a value.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from bench.attack_knobs import ATTACKER_TUNING_KNOBS
from bench.leakage.names import DCOR, MEASURES
from bench.report.label_table import CHANCE, LABEL_AUC, LABEL_METRICS, shown_label_metrics
from bench.report.labels import metric_label, number
from bench.site.cells import DASH, Cell, stat_text
from bench.site.values import plain, stat

TUNING_DEFAULTS = {k.name: k.default for k in ATTACKER_TUNING_KNOBS}
BOARD_COLUMNS = (("label", "Worst label AUC", "num"), ("dcor", "dCor", "num"))


def attack_free_json(rows: Mapping[str, Mapping] | None) -> dict | None:
    """``{measure: stat}`` of the victim's aggregate rows, in :data:`MEASURES` order; None without any."""
    shown = {m: stat(rows[m]) for m in MEASURES if rows and m in rows}
    return shown or None


def _at_tuning_defaults(settings: Mapping) -> bool:
    return all(settings.get(k, default) == default for k, default in TUNING_DEFAULTS.items())


def _order(item: dict) -> tuple:
    values = [(isinstance(v, str), v) for _, v in sorted(item["settings"].items())]
    return item["headline_metric"] not in LABEL_METRICS, item["attack"], values


def label_leakage_json(attacks: Iterable[dict], chances: Iterable[Mapping[str, Mapping]]) -> list[dict]:
    """The entry's label leakage from its attack items and, beside each, the aggregate rows of its
    chance metrics (``{chance metric: row}``); empty where no label attack ran."""
    out = []
    for item, chance in sorted(zip(attacks, chances), key=lambda pair: _order(pair[0])):
        if not _at_tuning_defaults(item["settings"]):
            continue
        recorded = {m: item["metrics"][m]["mean"] is not None for m in LABEL_METRICS if m in item["metrics"]}
        settings = {k: v for k, v in item["settings"].items() if k not in TUNING_DEFAULTS}
        out += [{"attack": item["attack"], "settings": settings, "metric": m, "stat": item["metrics"][m],
                 "chance": plain((chance.get(CHANCE[m]) or {}).get("mean"))}
                for m in shown_label_metrics(item["headline_metric"], recorded)]
    return out


def label_rows(entry: dict) -> list[dict[str, str]]:
    """The entry page's label-leakage rows: attack, the settings of its knobs that vary among its items
    (as Table LABELS names its columns), metric, measured ± CI, chance."""
    items = entry.get("label_leakage", [])
    varying = {a: {k for k in {k for i in items if i["attack"] == a for k in i["settings"]}
                   if len({repr(i["settings"].get(k)) for i in items if i["attack"] == a}) > 1}
               for a in {i["attack"] for i in items}}
    return [{"attack": item["attack"],
             "settings": ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                                   for k, v in sorted(item["settings"].items()) if k in varying[item["attack"]]) or DASH,
             "metric": metric_label(item["metric"]), "measured": stat_text(item["stat"], item["metric"]),
             "chance": number(item["chance"], item["metric"]) if item["chance"] is not None else DASH}
            for item in items]


def attack_free_rows(entry: dict) -> list[dict[str, str]]:
    """The entry page's attack-free rows: measure, value ± CI (or the reason it is absent), meaning."""
    rows = []
    for measure, value in (entry.get("attack_free") or {}).items():
        shown = stat_text(value, measure)
        if value["mean"] is None:
            shown += f" ({value['note']})" if value["note"] else " (no reason stored)"
        rows.append({"measure": metric_label(measure), "value": shown, "meaning": MEASURES.get(measure, "")})
    return rows


def board_columns(entries: list[dict]) -> list[tuple[str, str, str]]:
    """:data:`BOARD_COLUMNS` that some entry of the board has a value for."""
    has = {"label": any(LABEL_AUC in e.get("worst_case", {}) for e in entries),
           "dcor": any(((e.get("attack_free") or {}).get(DCOR) or {}).get("mean") is not None for e in entries)}
    return [c for c in BOARD_COLUMNS if has[c[0]]]


def board_cells(entry: dict) -> dict[str, Cell]:
    """The entry's two board cells: its worst-case label AUC (with the attack in the hover title) and dCor."""
    worst = entry["worst_case"].get(LABEL_AUC)
    label = Cell(DASH)
    if worst is not None:
        label = Cell(stat_text(worst["stat"], LABEL_AUC), worst["stat"]["mean"],
                     title=f"the most leaking label attack seed by seed: {worst['attack']}; chance 0.5")
    dcor = (entry.get("attack_free") or {}).get(DCOR)
    return {"label": label,
            "dcor": Cell(stat_text(dcor, DCOR), dcor["mean"], title=MEASURES[DCOR]) if dcor else Cell(DASH)}
