"""How to remake an entry: the ``bench run`` commands rebuilt from its records, and its code versions.

Every record stores its cell's factors (``cell``) and the knobs its defense and attack read with their
values resolved (``knobs``). A command names every one of those explicitly (a knob at its default
leaves the cell's id unchanged, so naming it is harmless), so the cells it expands to include every
cell the entry summarises: one command per results folder, seeds and attack knob values (attacks
share one where each keeps, on every knob it reads, its own values; the victim cells, attack
``none``, ride with the attacks run on the same seeds). The folder's ``grid.toml``,
where it has one, is the grid file the folder was made with (``bench run --config``).

A code version (provenance ``code_version``) ending in ``-dirty`` came from a working tree with
uncommitted changes; an entry whose records carry several versions mixes code.
"""
from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path

from bench.run.cell import Cell
from bench.site.records import RecordFile

DIRTY = "-dirty"
GRID_FILE = "grid.toml"
# bench run's own defaults for the setting (bench/cli/run.py): an option at its default is left out.
SETTING_OPTIONS = (("protocol", "--protocol"), ("heads", "--heads"), ("partition", "--partition"), ("alpha", "--alpha"),
                   ("clients", "--clients"))


def value_text(value: object) -> str:
    """A knob or factor value as the command line spells it (``8`` for 8.0)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _setting_defaults() -> dict[str, object]:
    import dataclasses

    return {f.name: f.default for f in dataclasses.fields(Cell)}


def _knobs(file: RecordFile, part: str) -> dict[str, object]:
    """The resolved knobs of ``part`` (``defense`` or ``attack``), else the cell's identity knobs."""
    resolved = file.knobs.get(part)
    if isinstance(resolved, dict):
        return resolved
    stored = file.cell.get(f"{part}_knobs") or {}
    return dict(stored) if isinstance(stored, dict) else {k: v for k, v in stored}


def _attack_knobs(attack: str) -> tuple:
    """The knobs ``attack`` reads in this installation (none for one it does not register)."""
    from bench.run.grid import attack_knobs_of

    try:
        return attack_knobs_of(attack)
    except Exception:  # noqa: BLE001 - an attack this installation does not register
        return ()


def _reads(attack: str) -> set[str]:
    return {k.name for k in _attack_knobs(attack)}


def _unnamed_gives(name: str, value: str, attacks: list[str]) -> bool:
    """Whether leaving knob ``name`` unnamed gives every attack of ``attacks`` that reads it ``value``
    alone (its default, no sweep): naming it then changes nothing (``budget=1``)."""
    readers = [k for a in attacks for k in _attack_knobs(a) if k.name == name]
    return bool(readers) and all(not k.required and len(k.default_values()) == 1 and value_text(k.default_values()[0]) == value
                                 for k in readers)


def _mergeable(knobs: Mapping[str, str], attacks: list[str], other: Mapping[str, str], others: list[str]) -> bool:
    """Whether two groups' attacks can share one command: on every knob each attack reads, the merged
    values are its own (a record older than a knob lacks it: naming it would make another cell)."""
    if set(attacks) & set(others) or any(knobs[k] != other[k] for k in knobs.keys() & other.keys()):
        return False
    merged = {**knobs, **other}
    return all({k: v for k, v in merged.items() if k in _reads(a)} == {k: v for k, v in own.items() if k in _reads(a)}
               for own, group in ((knobs, attacks), (other, others)) for a in group)


def commands(entry: Mapping, records: Mapping[str, RecordFile]) -> list[str]:
    """The ``bench run`` commands whose cells include every cell of ``entry``.

    Args:
        entry: a leaderboard entry (:mod:`bench.site.entries`).
        records: the record file of every cell the entry names.

    Returns:
        One command per (results folder, attack knob values, seeds), attacks in the entry's order.
    """
    groups: dict[tuple, dict[str, set[int]]] = {}
    victims: dict[str, set[int]] = {}
    for item in entry["records"]:
        file = records[item["cell_id"]]
        if item["attack"] == "none":
            victims.setdefault(file.results, set()).add(int(item["seed"]))
            continue
        knobs = tuple(sorted((k, value_text(v)) for k, v in _knobs(file, "attack").items()))
        groups.setdefault((file.results, knobs), {}).setdefault(item["attack"], set()).add(int(item["seed"]))
    by_seeds: dict[tuple, list[str]] = {}
    for (results, knobs), attacks in groups.items():
        for attack, seeds in attacks.items():
            key = (results, knobs, tuple(sorted(seeds)))
            home = next((k for k in by_seeds if k[0] == results and k[2] == key[2]
                         and _mergeable(dict(k[1]), by_seeds[k], dict(knobs), [attack])), None)
            if home is None:
                by_seeds[key] = [attack]
            else:
                by_seeds[(results, tuple(sorted({**dict(home[1]), **dict(knobs)}.items())), key[2])] = [*by_seeds.pop(home), attack]
    for results, seeds in victims.items():  # the victim cells join a command on the same seeds, else their own
        home = next((k for k in by_seeds if k[0] == results and k[2] == tuple(sorted(seeds))), None)
        if home is None:
            by_seeds[(results, (), tuple(sorted(seeds)))] = ["none"]
        else:
            by_seeds[home].insert(0, "none")
    first = records[entry["records"][0]["cell_id"]]
    return [_command(entry, first, results, dict(knobs), seeds, attacks)
            for (results, knobs, seeds), attacks in sorted(by_seeds.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1]))]


def _command(entry: Mapping, file: RecordFile, results: str, attack_knobs: dict[str, str], seeds: tuple[int, ...],
             attacks: list[str]) -> str:
    cell = file.cell
    knobs: dict[str, list[str]] = {}
    defense_knobs = {k: value_text(v) for k, v in _knobs(file, "defense").items()}
    attack_knobs = {k: v for k, v in attack_knobs.items() if k in defense_knobs or not _unnamed_gives(k, v, attacks)}
    for name, value in [*defense_knobs.items(), *attack_knobs.items()]:
        knobs.setdefault(name, [])
        if value not in knobs[name]:
            knobs[name].append(value)
    args = ["bench", "run", "--dataset", entry["dataset"], "--victim", entry["victim"], "--cut", entry["cut"],
            "--defense", entry["defense"]["name"]]
    for name, values in sorted(knobs.items()):
        args += ["--knob", f"{name}={','.join(values)}"]
    lam = cell.get("lambda_wcc") or 0.0
    if lam:
        args += ["--lambda-wcc", value_text(float(lam))]
    args += ["--attack", ",".join(attacks), "--seeds", ",".join(map(str, seeds)), "--profile", entry["profile"]]
    defaults = _setting_defaults()
    for name, option in SETTING_OPTIONS:
        value = entry["setting"].get(name)
        if value is not None and value != defaults[name]:
            args += [option, value_text(value)]
    args += ["--out", results]
    return shlex.join(args)


def grid_files(entry: Mapping) -> list[str]:
    """The ``grid.toml`` of each results folder the entry's records were read from, where it has one."""
    folders = dict.fromkeys(r["results"] for r in entry["records"])
    return [f"{folder}/{GRID_FILE}" for folder in folders if (Path(folder) / GRID_FILE).is_file()]


def code_flags(code_versions: list[str]) -> tuple[bool, bool]:
    """``(dirty, mixed)``: a version from a working tree with uncommitted changes; more than one version."""
    return any(v.endswith(DIRTY) for v in code_versions), len(code_versions) > 1


def reproduce_json(entry: Mapping, records: Mapping[str, RecordFile]) -> dict:
    """The entry's ``reproduce`` object: its commands and its results folders' grid files."""
    return {"commands": commands(entry, records), "grid_files": grid_files(entry)}
