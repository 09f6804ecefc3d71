"""Rank correlations between the attack-free measures and the worst case, from tidy tables made by hand.

Oracles: a measure that orders the defenses exactly as the worst case does gives ρ = τ = +1, reversed −1,
whichever way the measure reads (the MSE bound is larger where the others are smaller); with three
configurations every pairing is enumerated, so both p-values are exactly 2/6 = 1/3; only configurations
where both sides are finite count.
"""
import math

import pandas as pd
import pytest

from bench.leakage.names import DCOR, DFIL, DFIL_MSE_BOUND
from bench.report.rank_correlation import agreement_lines, correlate, rank_correlations
from bench.report.render import to_markdown
from bench.report.tables import TABLES, build_table
from tests.bench.report.handmade import runs, tidy

# (defense, knobs, worst-case SSIM): LightSplit-F+DP leaks least, Raw most.
CONFIGS = (("raw", {}, 0.95), ("lightsplit-f", {"cr": 8.0}, 0.60), ("lightsplit-f+dp", {"cr": 8.0, "sigma": 0.5}, 0.30))


def grid(measures: dict[str, tuple[float | None, ...]], *, cut_name: str = "split-2"):
    """One victim and one reference-decoder run per configuration and seed; ``measures``: measure → its
    value per configuration (in :data:`CONFIGS` order, the same on every seed)."""
    parts = []
    for i, (defense, knobs, ssim) in enumerate(CONFIGS):
        values = {m: (v[i],) * 3 for m, v in measures.items()}
        parts += [runs("none", defense, values={"accuracy": (0.9, 0.9, 0.9), **values}, cut=cut_name, **knobs),
                  runs("decoder-ref", defense, values={"ssim": (ssim, ssim, ssim)}, cut=cut_name, **knobs)]
    return tidy(*parts)


def one(found, measure):
    (row,) = found[found["measure"] == measure].to_dict("records")
    return row


def test_a_measure_ordering_the_defenses_like_the_worst_case_gives_plus_one_and_reversed_minus_one():
    found = rank_correlations(grid({DCOR: (0.9, 0.5, 0.1), DFIL: (0.1, 0.5, 0.9), DFIL_MSE_BOUND: (0.1, 0.5, 0.9)}))
    alike, reversed_, bound = one(found, DCOR), one(found, DFIL), one(found, DFIL_MSE_BOUND)
    assert (alike["spearman"], alike["kendall"], alike["n"]) == (1.0, 1.0, 3)
    assert (reversed_["spearman"], reversed_["kendall"]) == (-1.0, -1.0)
    # A larger bound on the attacker's MSE is more private: growing where SSIM falls is agreement.
    assert (bound["spearman"], bound["kendall"]) == (1.0, 1.0)
    assert alike["spearman_p"] == pytest.approx(1 / 3) and alike["kendall_p"] == pytest.approx(1 / 3)


def test_only_configurations_measuring_both_count_and_too_few_give_no_correlation():
    found = rank_correlations(grid({DCOR: (0.9, None, 0.1), DFIL: (None, None, 4.0)}))
    assert one(found, DCOR)["n"] == 2 and math.isnan(one(found, DCOR)["spearman"])
    assert one(found, DCOR)["note"] == "fewer than 3 defense configurations measure both (n = 2)"
    assert one(found, DFIL)["n"] == 1
    assert correlate([(1.0, 0.1), (1.0, 0.5), (1.0, 0.9)])["note"] == "the measure is the same on every configuration: no ranking"


def test_each_dataset_victim_and_cut_is_ranked_on_its_own():
    table = grid({DCOR: (0.9, 0.5, 0.1)})
    other = grid({DCOR: (0.1, 0.5, 0.9)}, cut_name="split-4")
    found = rank_correlations(pd.concat([table, other], ignore_index=True))
    assert [(r["cut"], r["spearman"]) for r in found.to_dict("records")] == [("split-2", 1.0), ("split-4", -1.0)]


def test_the_table_and_the_verify_block_show_them_with_n():
    table = grid({DCOR: (0.9, 0.5, 0.1), DFIL: (None, None, 4.0)})
    built = build_table(table, TABLES["LEAKAGE-RANK"])
    assert list(built.body.columns) == ["Dataset", "Victim", "Cut", "Measure", "Spearman: ρ", "Spearman: p", "Kendall: τ",
                                        "Kendall: p", "n"]
    assert built.body.values.tolist() == [["MNIST", "mnistnet", "split-2", "dCor", "+1.00", "0.333", "+1.00", "0.333", "3"],
                                          ["MNIST", "mnistnet", "split-2", "dFIL", "—¹", "", "—¹", "", "1"]]
    assert built.has_defended_rows and not built.has_attack_columns  # shown by default, never at another attack budget
    assert to_markdown(built).startswith("**Table LEAKAGE-RANK: Do attack-free measures agree with the worst case? ")
    lines = agreement_lines(table)
    assert lines[0].startswith("do attack-free measures agree with the worst case?")
    assert lines[1] == ("  mnist mnistnet/split-2: dcor_input_payload: Spearman ρ +1.00 (p 0.333), Kendall τ +1.00 (p 0.333), "
                        "n = 3 configurations")
    assert agreement_lines(grid({})) == [] and build_table(grid({}), TABLES["LEAKAGE-RANK"]).body.empty
