import pytest

from bench.site.front_page import BEGIN, END, front_page, replace_block, summary_boards, summary_rows
from bench.site.row_labels import LabelDefaults


def entry(defense, *, cr=None, ssim=None, accuracy=0.9, group=None, victim="mnistnet", clients=1, lambda_wcc=0.0,
          not_above_floor=False, n=3, not_learned=(), missing=()):
    knobs = {"lambda_wcc": lambda_wcc, **({"cr": cr} if cr else {})}
    return {
        "profile": "cpu", "dataset": "mnist", "victim": victim, "cut": "split-2",
        "setting": {"protocol": "ushaped", "heads": "sch", "partition": "iid", "alpha": None, "clients": clients},
        "defense": {"name": defense, "knobs": knobs}, "label": f"{defense} {cr}",
        "accuracy": {"mean": accuracy}, "bytes_group": {"group_cr": group or (cr or 1.0), "bytes": 9216 / (cr or 1)},
        "ranking": {"metric": "ssim" if ssim is not None else None, "direction": -1 if ssim is not None else 0,
                    "value": ssim, "attack": "sdar" if ssim is not None else None, "n": n,
                    "ranked": ssim is not None and not not_learned},
        "worst_case": {"ssim": {"stat": {"mean": ssim, "ci95": 0.01, "n": n}}} if ssim is not None else {},
        "flags": {"not_above_floor": not_above_floor, "not_learned_cells": list(not_learned), "missing_attacks": list(missing)},
        "floor": {"metrics": {"ssim": {"mean": 0.119}}},
    }


DEFAULTS = LabelDefaults(victims={"mnist": ("mnistnet", "split-2")})


def test_rows_are_raw_the_papers_defense_and_the_most_private_at_eight_times_fewer_bytes():
    raw, lsf = entry("raw", ssim=0.95, accuracy=0.97), entry("lightsplit-f", cr=8, ssim=0.90, accuracy=0.93)
    lsl, topk16 = entry("lightsplit-l", cr=8, ssim=0.60), entry("topk", cr=16, ssim=0.10)
    wcc = entry("lightsplit-f", cr=8, ssim=0.85, lambda_wcc=0.1)
    rows = summary_rows([raw, topk16, wcc, lsl, lsf])
    assert [(role, e) for role, e in rows] == [("raw", raw), ("the paper's defense", lsf), ("most private at ~8× bytes", lsl)]
    # a learned 1×1 at nominal CR 16 that sends 8× fewer bytes competes in the 8× group
    learned = entry("learned-1x1", cr=16, ssim=0.50, group=8.0)
    assert summary_rows([raw, lsf, lsl, learned])[-1][1] is learned


def test_a_row_whose_victim_is_at_chance_is_never_the_most_private():
    raw, lsf = entry("raw", ssim=0.95, accuracy=0.97), entry("lightsplit-f", cr=8, ssim=0.90, accuracy=0.93)
    at_chance = entry("mid", cr=8, ssim=0.20, accuracy=0.11, not_learned=["c1"])
    topk = entry("topk", cr=8, ssim=0.80)
    assert summary_rows([raw, lsf, at_chance, topk])[-1] == ("most private at ~8× bytes", topk)
    text = front_page([raw, entry("lightsplit-f", cr=8, ssim=0.5, not_learned=["c1", "c2"])], DEFAULTS)
    assert "victim at chance on 2 cells" in text.splitlines()[3]


def test_a_row_that_did_not_face_the_boards_winning_attacks_is_never_the_most_private():
    raw, lsf = entry("raw", ssim=0.95, accuracy=0.97), entry("lightsplit-f", cr=8, ssim=0.90, accuracy=0.93)
    unattacked = entry("shredder", cr=8, ssim=0.30, missing=["sdar (moment_tie=1)"])
    topk = entry("topk", cr=8, ssim=0.80)
    less_private = entry("nopeek", cr=8, ssim=0.95, missing=["sdar"])
    assert summary_rows([raw, lsf, unattacked, less_private, topk])[-1] == (
        "most private at ~8× bytes (1 more private row did not face every winning attack)", topk)
    text = front_page([raw, entry("lightsplit-f", cr=8, ssim=0.5, missing=["sdar (moment_tie=1)"])], DEFAULTS)
    assert "1 of the board's winning attacks not faced" in text.splitlines()[3]


def test_the_papers_defense_as_the_most_private_is_named_once():
    raw, lsf = entry("raw", ssim=0.95), entry("lightsplit-f", cr=8, ssim=0.40)
    rows = summary_rows([raw, entry("topk", cr=8, ssim=0.7), lsf])
    assert [role for role, _ in rows] == ["raw", "the paper's defense; most private at ~8× bytes"]


def test_the_board_is_the_default_setting_with_the_most_attacked_rows():
    plain = [entry("raw", ssim=0.9), entry("lightsplit-f", cr=8)]
    other_victim = [entry("raw", ssim=0.9, victim="simplecnn"), entry("lightsplit-f", cr=8, ssim=0.5, victim="simplecnn")]
    clients = [entry("raw", ssim=0.9, clients=5), entry("lightsplit-f", cr=8, ssim=0.5, clients=5),
               entry("topk", cr=8, ssim=0.4, clients=5)]
    boards = summary_boards(plain + other_victim + clients, DEFAULTS)
    assert boards["mnist"] == other_victim  # five clients never; the victim with more attacked rows wins


def test_the_table_shows_bytes_accuracy_change_and_the_flagged_worst_case():
    text = front_page([entry("raw", ssim=0.95, accuracy=0.97),
                       entry("lightsplit-f", cr=8, ssim=0.10, accuracy=0.93, not_above_floor=True, n=2)], DEFAULTS)
    lsf_line = text.splitlines()[3]
    assert "| 1152 |" in lsf_line and "-4.0 pp" in lsf_line
    assert "0.100 ± 0.010 (n=2) by sdar (not above the floor); floor 0.119" in lsf_line
    assert "97.0% (raw)" in text.splitlines()[2]


def test_the_block_between_the_markers_is_replaced_and_nothing_else():
    text = f"head\n{BEGIN}\nold\n{END}\ntail\n"
    assert replace_block(text, "new") == f"head\n{BEGIN}\nnew\n{END}\ntail\n"
    with pytest.raises(ValueError, match="markers"):
        replace_block("no markers here", "new")
