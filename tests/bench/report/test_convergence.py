"""The budget rule, seed by seed on the same victims: converged, not converged, unstable or unknown."""
import math

import pandas as pd
import pytest

from bench.report.convergence import (
    CONVERGED,
    NOT_CONVERGED,
    RELATIVE_TOLERANCE,
    SSIM_TOLERANCE,
    UNKNOWN,
    UNSTABLE,
    judge,
    judge_at,
    judge_cells,
)
from bench.run.table import headline_metrics, with_attack_facts


def seeds(*values: float) -> dict[tuple[int, str], float]:
    """``{(seed, victim_key): value}`` for seeds 0, 1, ... on victims v0, v1, ..."""
    return {(i, f"v{i}"): v for i, v in enumerate(values)}


def test_the_issues_example_is_unstable_though_its_mean_gain_is_within_the_tolerance():
    # Raw SDAR on CIFAR-10, x4 against x16: +0.066, +0.080, -0.126 (mean +0.0067, the old rule's "converged").
    low, high = seeds(0.48, 0.49, -0.06), seeds(0.546, 0.570, -0.186)
    verdict = judge(low, high, budget=4.0, metric="ssim")
    assert abs(sum(g.gain for g in verdict.seeds) / 3) <= SSIM_TOLERANCE
    assert verdict.verdict == UNSTABLE and not verdict.converged
    assert [g.gain for g in verdict.seeds] == pytest.approx([0.066, 0.080, -0.126])
    assert [g.verdict for g in verdict.seeds] == [NOT_CONVERGED, NOT_CONVERGED, UNSTABLE]
    assert verdict.larger == 16.0 and verdict.mark == "‡"


def test_a_fall_beyond_the_tolerance_is_unstable_never_converged():
    # FORA on CIFAR-10, x1 against x4: 0.1129 -> 0.0702 (-0.043).
    verdict = judge(seeds(0.1129), seeds(0.0702), budget=1.0, metric="ssim")
    assert verdict.verdict == UNSTABLE and verdict.seeds[0].gain == pytest.approx(-0.0427)


def test_a_climb_on_one_seed_is_not_converged_even_when_the_others_are_flat():
    verdict = judge(seeds(0.50, 0.50, 0.50), seeds(0.50, 0.51, 0.53), budget=1.0, metric="ssim")
    assert verdict.verdict == NOT_CONVERGED and verdict.mark == "†"


def test_gains_and_falls_within_the_tolerance_are_converged():
    half = SSIM_TOLERANCE / 2
    verdict = judge(seeds(0.9, 0.8), seeds(0.9 + half, 0.8 - half), budget=1.0, metric="ssim")
    assert verdict.verdict == CONVERGED and verdict.converged and verdict.mark == ""
    assert all(g.tolerance == SSIM_TOLERANCE for g in verdict.seeds)


def test_other_metrics_gain_in_their_privacy_direction_with_each_seeds_relative_tolerance():
    # masked MSE: larger is more private, so a stronger attack lowers it; 5% of each seed's own value.
    verdict = judge(seeds(0.100, 0.400), seeds(0.096, 0.370), budget=1.0, metric="masked_mse_minmax")
    assert [g.gain for g in verdict.seeds] == pytest.approx([0.004, 0.030])
    assert [g.tolerance for g in verdict.seeds] == pytest.approx([RELATIVE_TOLERANCE * 0.1, RELATIVE_TOLERANCE * 0.4])
    assert [g.verdict for g in verdict.seeds] == [CONVERGED, NOT_CONVERGED]
    assert verdict.verdict == NOT_CONVERGED


def test_only_seeds_stored_at_both_budgets_are_judged_and_the_others_counted():
    # Seed 1 at x1 only (its climb is never seen); seed 2 at x4 only, on another victim than x1's.
    low = {(0, "v0"): 0.50, (1, "v1"): 0.10, (2, "v2"): 0.30}
    high = {(0, "v0"): 0.505, (2, "other"): 0.9}
    verdict = judge(low, high, budget=1.0, metric="ssim")
    assert [g.seed for g in verdict.seeds] == [0] and verdict.unpaired == 2 and verdict.verdict == CONVERGED


@pytest.mark.parametrize("low, high, metric", [
    (seeds(0.9), {}, "ssim"),  # the highest budget stored
    (seeds(0.9), {(0, "elsewhere"): 0.9}, "ssim"),  # no seed paired
    (seeds(math.nan), seeds(0.9), "ssim"),  # nothing finite to pair
    (seeds(0.9), seeds(0.9), "accuracy"),  # no privacy direction
])
def test_unknown_without_a_paired_seed_at_four_times_the_budget_or_a_direction(low, high, metric):
    verdict = judge(low, high, budget=1.0, metric=metric)
    assert verdict.verdict == UNKNOWN and verdict.seeds == () and verdict.mark == "°"


def _rows(cells: list[tuple[str, float, int, float]], attack: str = "sdar") -> pd.DataFrame:
    """Tidy SSIM rows (defense, budget, seed, value), one victim per (defense, seed)."""
    return pd.DataFrame([
        {"dataset": "d", "victim": "v", "cut": "c", "profile": "cpu", "defense": defense, "attack": attack,
         "attack_budget": budget, "seed": seed, "victim_key": f"{defense}-{seed}", "cell_id": f"{defense}-{seed}-{budget}",
         "metric": "ssim", "value": value, "status": "ok", "headline_metric": "ssim"}
        for defense, budget, seed, value in cells
    ])


def test_cells_are_judged_per_configuration_at_every_stored_budget():
    rows = _rows([("raw", 1.0, 0, 0.5), ("raw", 4.0, 0, 0.6), ("raw", 16.0, 0, 0.6),
                  ("topk", 1.0, 0, 0.5), ("topk", 4.0, 0, 0.45)])
    judged = {(r["defense"], r["budget"]): r["convergence"].verdict for r in judge_cells(rows, by=["defense"]).to_dict("records")}
    assert judged == {("raw", 1.0): NOT_CONVERGED, ("raw", 4.0): CONVERGED, ("raw", 16.0): UNKNOWN,
                      ("topk", 1.0): UNSTABLE, ("topk", 4.0): UNKNOWN}


def test_a_table_reads_the_budget_asked_and_leaves_other_settings_out():
    rows = _rows([("raw", 1.0, 0, 0.5), ("raw", 4.0, 0, 0.505)])
    tuned = _rows([("raw", 4.0, 0, 0.1)]).assign(attack_lambda1_scale=2.5)  # another SDAR weight: not this attacker
    (verdict,) = judge_at(pd.concat([rows, tuned]), by=["defense"], budget=1.0)["convergence"]
    assert verdict.verdict == CONVERGED and verdict.budget == 1.0


def test_headline_metrics_are_read_from_the_rows_or_filled_from_the_registry():
    older = pd.DataFrame({"attack": ["none", "decoder-ref", "unsplit", "har-recon", "har-reid", "not-registered"]})
    assert headline_metrics(with_attack_facts(older)) == {
        "decoder-ref": "ssim", "unsplit": "masked_mse_minmax", "har-recon": "median_r2", "har-reid": "reid_accuracy"}
    recorded = pd.DataFrame({"attack": ["plugin", "none"], "headline_metric": ["lpips", None]})
    assert headline_metrics(with_attack_facts(recorded)) == {"plugin": "lpips"}  # a recorded fact is kept
