"""Which attacks that set a board's worst cases each row faced (bench.site.coverage)."""
from __future__ import annotations

from bench.site.coverage import attacker, board_winners, missing_attacks, missing_board_attacks

TIED = {"budget": 16.0, "moment_tie": 1.0}


def row(defense: str, faced: dict[tuple, list[int]], *, seeds=(0, 1, 2), winner=("decoder-ref", {"budget": 1.0}), failed=()):
    """An entry that faced each ``(attack, settings items)`` of ``faced`` on the listed seeds, its
    worst case won by ``winner`` on every seed of ``seeds``."""
    attacks, records = [], []
    for (attack, items), on in faced.items():
        cells = [f"{defense}-{attack}-{dict(items).get('budget')}-{s}" for s in on]
        attacks.append({"attack": attack, "settings": dict(items), "metrics": {"ssim": {"mean": 0.5}}, "cells": cells})
        records += [{"cell_id": c, "seed": s, "status": "failed" if c in failed else "ok"} for c, s in zip(cells, on)]
    worst = {"seeds": [{"seed": s, "attack": winner[0], "settings": winner[1], "value": 0.5} for s in seeds]}
    return {"profile": "cpu", "dataset": "mnist", "victim": "mnistnet", "cut": "split-2", "setting": {},
            "defense": {"name": defense}, "attacks": attacks, "records": records,
            "worst_case": {"ssim": worst}, "ranking": {"metric": "ssim", "ranked": True}}


REF = ("decoder-ref", (("budget", 1.0),))
SDAR_TIED = ("sdar", tuple(TIED.items()))
SDAR_X4 = ("sdar", (("budget", 4.0), ("moment_tie", 1.0)))


def test_the_winners_are_every_seeds_strongest_attack_on_the_board_budget_left_out():
    board = [row("raw", {REF: [0, 1, 2], SDAR_TIED: [0, 1, 2]}, winner=("sdar", TIED)), row("shredder", {REF: [0, 1, 2]})]
    assert board_winners(board, "ssim") == {attacker("sdar", TIED), attacker("decoder-ref", {"budget": 1.0})}
    assert attacker("sdar", TIED) == ("sdar", (("moment_tie", 1.0),))


def test_a_win_on_an_unranked_row_does_not_count():
    """On a victim at chance every attack reads the floor; the linear probe winning there is noise."""
    at_chance = row("mid", {REF: [0, 1, 2], ("linear-probe", (("budget", 1.0),)): [0, 1, 2]}, winner=("linear-probe", {"budget": 1.0}))
    at_chance["ranking"]["ranked"] = False
    assert board_winners([at_chance, row("raw", {REF: [0, 1, 2]})], "ssim") == {attacker("decoder-ref", {})}


def test_a_row_lacking_a_winner_on_some_seeds_names_them_and_a_lower_budget_counts_as_faced():
    winners = {attacker("sdar", TIED), attacker("decoder-ref", {"budget": 1.0})}
    assert missing_attacks(row("a", {REF: [0, 1, 2]}), winners, "ssim") == ["sdar (moment_tie=1)"]
    assert missing_attacks(row("b", {REF: [0, 1, 2], SDAR_TIED: [0, 1]}), winners, "ssim") == ["sdar (moment_tie=1) on seed 2"]
    assert missing_attacks(row("c", {REF: [0, 1, 2], SDAR_X4: [0, 1, 2]}), winners, "ssim") == []
    released = attacker("sdar", {"budget": 16.0, "moment_tie": 0.0})  # another setting is another attacker
    assert missing_attacks(row("d", {REF: [0, 1, 2], SDAR_TIED: [0, 1, 2]}), {released}, "ssim") == ["sdar"]


def test_a_setting_at_its_registered_default_is_the_same_attacker_as_a_record_made_before_the_knob():
    """Older records lack moment_tie and precision: they ran at the defaults (as released, float32)."""
    assert attacker("sdar", {"budget": 16.0, "moment_tie": 0.0, "lambda1_scale": 1.0}) == attacker("sdar", {"budget": 4.0})
    assert attacker("decoder-ref", {"precision": "float32"}) == attacker("decoder-ref", {}) == ("decoder-ref", ())
    assert attacker("sdar", {"moment_tie": 1.0}) != attacker("sdar", {})


def test_a_failed_cell_is_not_facing_the_attack():
    entry = row("a", {REF: [0, 1, 2], SDAR_TIED: [0, 1, 2]}, failed=("a-sdar-16.0-1",))
    assert missing_attacks(entry, {attacker("sdar", TIED)}, "ssim") == ["sdar (moment_tie=1) on seed 1"]


def test_boards_are_checked_apart_and_a_board_without_a_ranking_metric_flags_nothing():
    mnist = [row("raw", {REF: [0, 1, 2], SDAR_TIED: [0, 1, 2]}, winner=("sdar", TIED)), row("shredder", {REF: [0, 1, 2]})]
    other = row("shredder", {REF: [0, 1, 2]})
    other["dataset"] = "cifar10-jpeg"
    unranked = row("raw", {})
    unranked["dataset"], unranked["ranking"], unranked["worst_case"] = "wikitext2", {"metric": None, "ranked": False}, {}
    missing = missing_board_attacks([*mnist, other, unranked])
    assert [missing[id(e)] for e in (*mnist, other, unranked)] == [[], ["sdar (moment_tie=1)"], [], []]
