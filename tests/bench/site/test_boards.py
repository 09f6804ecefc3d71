"""Boards, row labels, bytes groups and flags, on entries made by hand (issue 40, items 1, 2, 3, 7)."""
from __future__ import annotations

import copy

import pytest

from bench.site.entries import rank_and_flag
from bench.site.pages import WIDE_CI, attack_rows, boards
from bench.site.ranking import board_position
from bench.site.row_labels import LabelDefaults, board_title, defense_row_label, disambiguate, duplicate_labels, row_label

DEFAULTS = LabelDefaults(victims={"mnist": ("mnistnet", "split-2")}, knobs={"lightsplit-l": {"width": 512}})
SETTING = {"protocol": "ushaped", "heads": "sch", "partition": "iid", "alpha": None, "clients": 1}


def stat(mean: float | None, ci: float | None = None, n: int = 3) -> dict:
    return {"mean": mean, "ci95": ci, "n": n if mean is not None else 0, "n_runs": n, "n_diverged": 0, "note": None}


def entry(defense: str = "raw", *, bytes_: float = 4608.0, ssim: float | None = 0.5, ci: float | None = 0.01,
          seeds: int = 3, measured: bool = True, accuracy: tuple[float, float | None] = (0.9, 0.01), victim: str = "mnistnet",
          cut: str = "split-2", **changes) -> dict:
    """One entry as :func:`bench.site.entries.build_entries` makes it, with the fields the boards read."""
    setting = {**SETTING, **{k: v for k, v in changes.items() if k in SETTING}}
    knobs = {"lambda_wcc": 0.0, **{k: v for k, v in changes.items() if k not in SETTING}}
    winners = [{"seed": s, "attack": "decoder-ref", "settings": {"budget": 1.0}, "value": ssim} for s in range(seeds)]
    faced = [] if ssim is None else [{  # the attack its worst case names, one cell a seed
        "attack": "decoder-ref", "settings": {"budget": 1.0}, "headline_metric": "ssim", "metrics": {"ssim": stat(ssim, ci, seeds)},
        "cells": [f"ref{s}" for s in range(seeds)], "convergence": {"verdict": "unknown", "budget": 1.0, "larger": 4.0, "seeds": []}}]
    worst = {} if ssim is None else {"ssim": {
        "attack": "decoder-ref", "settings": {"budget": 1.0}, "stat": stat(ssim, ci, seeds), "floor_metric": "ssim",
        "floor": stat(0.3), "leakage": {"gap": 0.2, "noise": 0.05, "measured": measured}, "seeds": winners}}
    made = {
        "entry_id": f"e{id(knobs)}", "profile": "cpu", "dataset": "mnist", "victim": victim, "cut": cut, "setting": setting,
        "defense": {"name": defense, "label": defense_row_label(defense, knobs, DEFAULTS), "knobs": knobs},
        "seeds": list(range(3)), "accuracy": stat(*accuracy), "attacks": faced, "worst_case": worst, "code_versions": ["0123456789ab"],
        "records": [{"cell_id": f"ref{s}", "seed": s, "status": "ok"} for s in range(seeds)],
        "bytes_per_sample": {"up": stat(bytes_), "down": stat(bytes_)},
        "flags": {"failed_cells": [], "diverged_cells": [], "not_learned_cells": [], "not_converged": []},
    }
    made["label"] = row_label(made, DEFAULTS)
    return made


def ranked(*entries: dict) -> list[dict]:
    entries = [copy.deepcopy(e) for e in entries]
    rank_and_flag(entries)
    return sorted(entries, key=board_position)  # as build_entries orders them


def board_rows(entries: list[dict]) -> dict[str, list[dict]]:
    return {b.title: b.rows for b in boards(entries)}


def test_labels_name_the_victim_cut_and_setting_off_their_defaults_and_knobs_off_theirs():
    assert entry()["label"] == "Raw"
    assert entry(victim="simplecnn", cut="l2h")["label"] == "Raw · simplecnn/l2h"
    assert entry(clients=5, partition="dirichlet", alpha=0.5, heads="pch")["label"] == "Raw · 5 clients, Dirichlet α=0.5, PCH"
    assert entry(protocol="vanilla")["label"] == "Raw · VSL"
    assert entry("lightsplit-l", cr=8.0, width=512)["label"] == "LightSplit-L (CR 8×)"  # the width's default left out
    assert entry("lightsplit-l", cr=8.0, width=256, lambda_wcc=0.1)["label"] == "LightSplit-L (CR 8×, λ_WCC=0.1, m=256)"
    assert entry("block-local", cr=8.0, tile=1.0)["label"] == "Block-local (CR 8×, b=1)"  # no default known: shown


def test_each_victim_cut_and_setting_gets_its_own_board_and_rows_never_share_a_label():
    entries = ranked(entry(), entry(clients=5), entry(clients=5, heads="pch"), entry(victim="simplecnn", cut="l2h"),
                     entry("lightsplit-f", cr=8.0, bytes_=576.0), entry("lightsplit-f", cr=8.0, bytes_=576.0, clients=5))
    rows = board_rows(entries)
    assert set(rows) == {"MNIST · mnistnet/split-2 (cpu profile)", "MNIST · mnistnet/split-2, 5 clients (cpu profile)",
                         "MNIST · mnistnet/split-2, 5 clients, PCH (cpu profile)", "MNIST · simplecnn/l2h (cpu profile)"}
    assert [r["defense"].text for r in rows["MNIST · mnistnet/split-2, 5 clients (cpu profile)"]] == [
        "Raw · 5 clients", "LightSplit-F (CR 8×) · 5 clients"]
    assert all(duplicate_labels(r["defense"].text for r in board) == {} for board in rows.values())
    per_client_heads = next(e for e in entries if e["setting"]["heads"] == "pch")
    assert board_title(per_client_heads) == "MNIST · mnistnet/split-2, 5 clients, PCH (cpu profile)"


def test_a_label_collision_on_a_board_is_found():
    """Two rows of one board whose only difference the label leaves out (an explicit default width)."""
    entries = ranked(entry("lightsplit-l", cr=8.0, width=512, bytes_=576.0), entry("lightsplit-l", cr=8.0, bytes_=576.0))
    (rows,) = board_rows(entries).values()
    assert duplicate_labels(r["defense"].text for r in rows) == {"LightSplit-L (CR 8×)": 2}
    disambiguate(entries, DEFAULTS)  # as build_entries does: those two rows show every knob
    assert sorted(e["label"] for e in entries) == ["LightSplit-L (CR 8×)", "LightSplit-L (CR 8×, m=512)"]


def test_rows_are_grouped_by_measured_bytes_and_a_nominal_cr_the_bytes_disagree_with_is_marked():
    """A learned 1×1 at "CR 16×" sends 576 B, as much as the CR 8 rows: it is ranked with them, marked."""
    entries = ranked(entry(bytes_=4608.0, ssim=0.95), entry("lightsplit-f", cr=8.0, bytes_=576.0, ssim=0.9),
                     entry("learned-1x1", cr=16.0, bytes_=576.0, ssim=0.8), entry("lightsplit-f", cr=16.0, bytes_=288.0, ssim=0.7),
                     entry("topk", cr=8.0, bytes_=480.0, ssim=0.85))
    learned = next(e for e in entries if e["defense"]["name"] == "learned-1x1")
    assert learned["bytes_group"] == {"bytes": 1152.0, "reference_bytes": 9216.0, "measured_cr": 8.0, "group_cr": 8.0,
                                      "nominal_cr": 16.0, "matches_nominal": False}
    (rows,) = board_rows(entries).values()
    shown = [(r["rank"].text, r["defense"].text, r["cr"].text) for r in rows]
    assert shown == [("1", "Raw", "none"), ("1", "Learned 1×1 (CR 16×)", "16× (measured 8×)"),
                     ("2", "top-K (CR 8×)", "8×"), ("3", "LightSplit-F (CR 8×)", "8×"), ("1", "LightSplit-F (CR 16×)", "16×")]


def test_a_single_seed_worst_case_is_marked_and_counted_as_one():
    (one,) = ranked(entry("lightsplit-f", cr=8.0, bytes_=576.0, ssim=0.884, ci=None, seeds=1))
    row = boards([one])[0].rows[0]
    assert one["flags"]["single_seed_worst_case"] and one["flags"]["flagged"]
    assert row["worst"].text == "0.884 (1 seed)" and row["seeds"].text == "1 of 3"
    assert "worst case from 1 seed" in row["flags"].text


def test_a_worst_case_within_noise_of_the_floor_ranked_first_carries_its_flag():
    entries = ranked(entry("lightsplit-l", cr=16.0, bytes_=288.0, ssim=0.285, ci=0.43, measured=False),
                     entry("lightsplit-f", cr=16.0, bytes_=288.0, ssim=0.8))
    first = boards(entries)[0].rows[0]
    assert first["rank"].text == "1" and first["defense"].text == "LightSplit-L (CR 16×)"
    assert "(not above floor)" in first["worst"].text and "worst case not above floor" in first["flags"].text
    assert first["flags"].sort >= 1  # the row is flagged (the page marks flagged rows)


def test_a_row_whose_victim_stayed_at_chance_takes_no_rank_and_follows_the_ranked_rows():
    """MID at chance leaks least (0.09) but carries nothing: it is listed after the rows that learned."""
    dead = entry("mid", cr=8.0, bytes_=576.0, ssim=0.09, accuracy=(0.11, 0.01))
    dead["flags"]["not_learned_cells"] = ["c1"]
    entries = ranked(entry("lightsplit-f", cr=8.0, bytes_=576.0, ssim=0.9), dead, entry("topk", cr=8.0, bytes_=576.0, ssim=0.85),
                     entry("c3sl", cr=8.0, bytes_=576.0, ssim=None))
    (rows,) = board_rows(entries).values()
    assert [(r["rank"].text, r["defense"].text) for r in rows] == [
        ("1", "top-K (CR 8×)"), ("2", "LightSplit-F (CR 8×)"), ("—", "MID (CR 8×)"), ("—", "C3-SL (CR 8×)")]
    assert [e["ranking"]["ranked"] for e in entries] == [True, True, False, False]
    assert "victim at chance" in rows[2]["flags"].text


@pytest.mark.parametrize("accuracy, ssim_ci, wide", [((0.532, 0.929), 0.01, ["accuracy"]), ((0.9, 0.01), 1.067, ["ssim"]),
                                                     ((0.9, 0.49), 0.99, [])])
def test_a_ci_wider_than_the_metrics_range_is_flagged(accuracy, ssim_ci, wide):
    (one,) = ranked(entry("lightsplit-f", cr=8.0, bytes_=576.0, ssim=0.31, ci=ssim_ci, accuracy=accuracy))
    assert one["flags"]["wide_ci"] == wide and one["flags"]["flagged"] == bool(wide)
    row = boards([one])[0].rows[0]
    assert [metric for key, metric in (("accuracy", "accuracy"), ("worst", "ssim")) if WIDE_CI in row[key].text] == wide
    one["attacks"] = [{"attack": "sdar", "settings": {"budget": 16.0}, "headline_metric": "ssim",
                       "metrics": {"ssim": stat(0.31, ssim_ci)}, "convergence": {"verdict": "unknown", "larger": 64.0, "seeds": []}}]
    (attack_row,) = attack_rows([one], "sdar")  # an attack's own page marks it too
    assert (WIDE_CI in attack_row["headline"].text) == ("ssim" in wide)


def test_a_row_that_never_faced_the_attack_that_wins_on_another_row_is_flagged_and_says_which():
    """Shredder faced only the reference decoder; SDAR tied sets top-K's worst case on the same board."""
    topk = entry("topk", cr=8.0, bytes_=576.0, ssim=0.9)
    topk["attacks"].append({"attack": "sdar", "settings": {"budget": 16.0, "moment_tie": 1.0}, "headline_metric": "ssim",
                            "metrics": {"ssim": stat(0.95)}, "cells": ["s0", "s1", "s2"],
                            "convergence": {"verdict": "unknown", "budget": 16.0, "larger": 64.0, "seeds": []}})
    topk["records"] += [{"cell_id": f"s{s}", "seed": s, "status": "ok"} for s in range(3)]
    topk["worst_case"]["ssim"]["seeds"] = [{"seed": s, "attack": "sdar", "settings": {"budget": 16.0, "moment_tie": 1.0},
                                            "value": 0.95} for s in range(3)]
    shredder = entry("shredder", cr=8.0, bytes_=576.0, ssim=0.5)
    entries = ranked(topk, shredder)
    flags = {e["defense"]["name"]: e["flags"] for e in entries}
    assert flags["shredder"]["missing_attacks"] == ["sdar (moment_tie=1)"] and flags["shredder"]["flagged"]
    assert flags["topk"]["missing_attacks"] == []  # it faced the reference decoder, which wins on Shredder
    (rows,) = board_rows(entries).values()
    assert "not faced: sdar (moment_tie=1)" in next(r for r in rows if r["defense"].text.startswith("Shredder"))["flags"].text


def test_the_worst_attack_says_on_how_many_seeds_it_was_the_strongest():
    (one,) = ranked(entry("lightsplit-l", cr=8.0, bytes_=576.0, ssim=0.779, ci=0.296))
    one["worst_case"]["ssim"]["attack"] = "decoder-z"
    one["worst_case"]["ssim"]["seeds"] = [
        {"seed": 0, "attack": "decoder-z", "settings": {"budget": 1.0}, "value": 0.916},
        {"seed": 1, "attack": "decoder-ref", "settings": {"budget": 1.0, "precision": "float32"}, "value": 0.701},
        {"seed": 2, "attack": "decoder-ref", "settings": {"budget": 1.0}, "value": 0.721}]
    defaults = {"decoder-ref": {"budget": 1.0, "precision": "float32"}, "decoder-z": {"budget": 1.0}}
    row = boards([one], defaults=defaults)[0].rows[0]
    assert row["worst_attack"].text == "decoder-z on 1 of 3 seeds"
    assert row["worst"].title == "strongest attack per seed (seed 0: decoder-z, seed 1: decoder-ref, seed 2: decoder-ref)"
    one["worst_case"]["ssim"]["attack"] = "decoder-ref"  # an explicit default setting is the same attacker
    one["worst_case"]["ssim"]["settings"] = {"budget": 1.0}
    assert boards([one], defaults=defaults)[0].rows[0]["worst_attack"].text == "decoder-ref on 2 of 3 seeds"
