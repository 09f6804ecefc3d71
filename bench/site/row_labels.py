"""Row labels that tell every leaderboard row apart, and the board each row belongs to.

A row is one trained victim's configuration: dataset, victim and cut, the setting (protocol, heads,
partition and α, clients) and the defense with its knobs. Its label names the defense with the
knobs that differ from their defaults (CR always: it is what rows are compared at), then the parts
of the victim and setting that differ from the defaults, so a row on the default victim and setting
reads ``LightSplit-F (CR 8×)`` and a federated one ``Block-local (CR 8×, b=1) · 5 clients,
Dirichlet α=0.5, PCH``. The defaults are declared on the classes that own them: the setting's on
:class:`bench.run.cell.Cell`, each dataset's victim on the victim that declares the dataset (and
its ``default_cut``), each defense knob's on the defense (:class:`bench.knobs.Knob`).
"""
from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bench.report.labels import DATASET_LABELS, FACTOR_LABELS, defense_label, factor_value
from bench.run.cell import Cell

SETTING_FIELDS = ("protocol", "heads", "partition", "alpha", "clients")
SEPARATOR = " · "


def knob_text(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _same(value: object, default: object) -> bool:
    if isinstance(value, (int, float)) and isinstance(default, (int, float)) and not isinstance(value, bool):
        return math.isclose(float(value), float(default))
    return value == default


@dataclass(frozen=True)
class LabelDefaults:
    """What a label leaves out.

    Attributes:
        victims: ``{dataset: (victim, cut)}``: the dataset's default victim at its default cut.
        knobs: ``{defense: {knob: default}}`` of every knob with a default: its declared default, or
            for a required knob the one value its grid crosses when none is named (``width`` 512,
            ``tile`` 2, ``sigma`` 0.02; ``cr`` crosses three, so it has none and is always shown).
        setting: ``{field: default}`` of the setting's fields and ``lambda_wcc``.
    """

    victims: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    knobs: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    setting: Mapping[str, object] = field(default_factory=lambda: cell_defaults())

    @classmethod
    def from_registries(cls, datasets: Iterable[str], defenses: Iterable[str]) -> LabelDefaults:
        """The defaults the registered victims and defenses declare (imports them: torch); a dataset
        or defense none declares keeps every part in its labels."""
        from bench.knobs import REQUIRED
        from defenses import knobs_of
        from victims import VICTIMS, default_victim

        victims, knobs = {}, {}
        for dataset in datasets:
            try:
                name = default_victim(dataset)
            except ValueError:
                continue
            victims[dataset] = (name, VICTIMS.get(name).default_cut)
        for defense in defenses:
            try:
                knobs[defense] = {k.name: k.default if k.default is not REQUIRED else k.sweep[0]
                                  for k in knobs_of(defense) if k.default is not REQUIRED or len(k.sweep) == 1}
            except Exception:  # noqa: BLE001 - a defense this installation does not register: show its knobs
                continue
        return cls(victims=victims, knobs=knobs)


def cell_defaults() -> dict[str, object]:
    """The setting's defaults as :class:`bench.run.cell.Cell` declares them (and ``lambda_wcc``'s)."""
    return {f.name: f.default for f in dataclasses.fields(Cell) if f.name in (*SETTING_FIELDS, "lambda_wcc")}


def defense_row_label(defense: str, knobs: Mapping[str, object], defaults: LabelDefaults | None = None) -> str:
    """``LightSplit-F (CR 8×, λ_WCC=0.1)``: the paper's name, CR, and each other knob off its default."""
    defaults = defaults or LabelDefaults()
    own = {**defaults.knobs.get(defense, {}), "lambda_wcc": defaults.setting.get("lambda_wcc", 0.0)}
    shown = [(k, v) for k, v in sorted(knobs.items(), key=lambda kv: (kv[0] != "cr", kv[0]))
             if k == "cr" or k not in own or not _same(v, own[k])]
    parts = [f"CR {knob_text(v)}×" if k == "cr" else f"{FACTOR_LABELS.get(k, k)}={knob_text(v)}" for k, v in shown]
    return defense_label(defense) + (f" ({', '.join(parts)})" if parts else "")


def context_parts(entry: Mapping, defaults: LabelDefaults | None = None) -> list[str]:
    """The victim and setting of ``entry`` as short texts, those at their defaults left out:
    ``["simplecnn/l2h", "5 clients", "Dirichlet α=0.5", "PCH"]``."""
    defaults = defaults or LabelDefaults()
    setting = entry["setting"]
    parts = []
    if defaults.victims.get(entry["dataset"]) != (entry["victim"], entry["cut"]):
        parts.append(f"{entry['victim']}/{entry['cut']}")

    def off(name: str) -> bool:
        return setting.get(name) is not None and not _same(setting[name], defaults.setting.get(name))

    if off("protocol"):
        parts.append(factor_value("protocol", setting["protocol"]))
    if off("clients"):
        parts.append(f"{setting['clients']} clients")
    if off("partition") or off("alpha"):
        alpha = f" {FACTOR_LABELS['alpha']}={knob_text(setting['alpha'])}" if setting.get("alpha") is not None else ""
        parts.append(("Dirichlet" if setting["partition"] == "dirichlet" else str(setting["partition"]).upper()) + alpha)
    if off("heads"):
        parts.append(factor_value("heads", setting["heads"]))
    return [p for p in parts if p]


def row_label(entry: Mapping, defaults: LabelDefaults | None = None) -> str:
    """The defense's label, then the victim and setting parts off their defaults."""
    context = context_parts(entry, defaults)
    return entry["defense"]["label"] + (SEPARATOR + ", ".join(context) if context else "")


def board_key(entry: Mapping) -> tuple:
    """The board an entry is ranked on: (profile, dataset, victim, cut, setting)."""
    return (entry["profile"], entry["dataset"], entry["victim"], entry["cut"],
            *(entry["setting"].get(f) for f in SETTING_FIELDS))


def by_board(entries: Iterable[Mapping]) -> dict[tuple, list]:
    """The entries grouped by :func:`board_key`, boards and entries in the order first given."""
    boards: dict[tuple, list] = {}
    for entry in entries:
        boards.setdefault(board_key(entry), []).append(entry)
    return boards


def board_title(entry: Mapping) -> str:
    """``CIFAR-10 (JPEG) · simplecnn/l2h, 5 clients, Dirichlet α=0.5, PCH (cpu profile)``: the data
    set, the victim and cut, the setting off its defaults, the profile."""
    context = ", ".join(context_parts(entry, LabelDefaults(victims={})))
    return f"{DATASET_LABELS.get(entry['dataset'], entry['dataset'])}{SEPARATOR}{context} ({entry['profile']} profile)"


def duplicate_labels(labels: Iterable[str]) -> dict[str, int]:
    """Every label given more than once, with its count."""
    return {label: n for label, n in Counter(labels).items() if n > 1}


def disambiguate(entries: list[dict], defaults: LabelDefaults) -> None:
    """Relabel the rows of a board that would share a label with every knob shown, defaults included
    (two stored configurations that differ only in a knob set to its default and one left unset)."""
    every_knob = dataclasses.replace(defaults, knobs={})
    for board in by_board(entries).values():
        shared = duplicate_labels(e["label"] for e in board)
        for entry in board:
            if entry["label"] in shared:
                entry["defense"]["label"] = defense_row_label(entry["defense"]["name"], entry["defense"]["knobs"], every_knob)
                entry["label"] = row_label(entry, defaults)
