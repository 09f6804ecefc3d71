"""Whether each row of a board faced the attacks that set its board's worst cases.

A row's worst case is the strongest attack it faced, seed by seed. A row that never faced an attack
which wins on some seed of another ranked row of the same board (:func:`bench.site.row_labels.board_key`)
may rank above rows that did for that reason alone: its worst case is a lower bound. An attack is
its name and its settings off their registered defaults, budget left out (the convergence study's
budgets are one attacker, and a record made before a knob existed, which lacks it, ran at its
default); a row faced it on a seed where it has a cell of that attack that did not fail. The
leaderboard flags such rows (``flags.missing_attacks``) and the front page does not choose one as
the most private.
"""
from __future__ import annotations

from collections.abc import Mapping

from bench.run.record import FAILED
from bench.site.catalog import attack_knob_defaults
from bench.site.row_labels import by_board, knob_text

Attacker = tuple[str, tuple]  # (attack, sorted (setting, value) pairs off their defaults, budget aside)


def attacker(attack: str, settings: Mapping) -> Attacker:
    """An attack as the coverage check tells attacks apart: its name and every setting but the budget
    that is off the attack's registered default."""
    defaults = attack_knob_defaults(attack)
    return attack, tuple(sorted((k, v) for k, v in settings.items()
                                if k != "budget" and not (k in defaults and defaults[k] == v)))


def attacker_label(item: Attacker) -> str:
    """``sdar (moment_tie=1)``: an attack and the (setting, value) pairs given (the entries' flags
    label their attacks with it, all settings or only those off their defaults)."""
    attack, settings = item
    text = ", ".join(f"{k}={knob_text(v)}" for k, v in settings)
    return f"{attack} ({text})" if text else attack


def board_winners(board: list[Mapping], metric: str) -> set[Attacker]:
    """Every attack that is the strongest on some seed of some ranked row of ``board`` on ``metric``
    (an unranked row's victim is at chance: its attacks all read the floor, and which wins says nothing)."""
    return {attacker(s["attack"], s["settings"]) for e in board if e["ranking"]["ranked"]
            for s in (e["worst_case"].get(metric) or {}).get("seeds", [])}


def faced_seeds(entry: Mapping, metric: str) -> dict[Attacker, set[int]]:
    """The seeds on which ``entry`` has a cell, not failed, of each attack that reports ``metric``."""
    seed_of = {r["cell_id"]: r["seed"] for r in entry["records"] if r["status"] != FAILED}
    faced: dict[Attacker, set[int]] = {}
    for item in entry["attacks"]:
        if metric in item["metrics"]:
            seeds = faced.setdefault(attacker(item["attack"], item["settings"]), set())
            seeds.update(seed_of[c] for c in item["cells"] if c in seed_of)
    return faced


def missing_attacks(entry: Mapping, winners: set[Attacker], metric: str) -> list[str]:
    """Each of ``winners`` that ``entry`` did not face on every seed of its worst case, labelled
    (with the seeds it lacks when it faced it on some)."""
    worst = entry["worst_case"].get(metric)
    seeds = {s["seed"] for s in worst["seeds"]} if worst else set()
    if not seeds:
        return []
    faced = faced_seeds(entry, metric)
    missing = []
    for item in sorted(winners):
        lacking = seeds - faced.get(item, set())
        if lacking == seeds:
            missing.append(attacker_label(item))
        elif lacking:
            missing.append(f"{attacker_label(item)} on seed {', '.join(map(str, sorted(lacking)))}")
    return missing


def missing_board_attacks(entries: list[Mapping]) -> dict[int, list[str]]:
    """``{id(entry): labels}``: per entry, :func:`missing_attacks` against its board's winners on the
    board's ranking metric (entries must carry ``ranking``: :func:`bench.site.ranking.rank_entries`)."""
    out: dict[int, list[str]] = {}
    for board in by_board(entries).values():
        metric = board[0]["ranking"]["metric"]
        winners = board_winners(board, metric) if metric else set()
        for entry in board:
            out[id(entry)] = missing_attacks(entry, winners, metric) if metric else []
    return out
