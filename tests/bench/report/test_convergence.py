"""The budget rule: converged when four times the budget gains at most the tolerance."""
import math

import pandas as pd
import pytest

from bench.report.convergence import RELATIVE_TOLERANCE, SSIM_TOLERANCE, convergence
from bench.run.table import headline_metrics, with_attack_facts


def test_ssim_gains_are_measured_against_an_absolute_tolerance():
    still_climbing = convergence({1.0: 0.70, 4.0: 0.80}, budget=1.0, metric="ssim")
    assert still_climbing.gain == pytest.approx(0.10) and not still_climbing.converged
    flat = convergence({1.0: 0.95, 4.0: 0.95 + SSIM_TOLERANCE / 2}, budget=1.0, metric="ssim")
    assert flat.converged and flat.tolerance == SSIM_TOLERANCE and flat.larger == 4.0


def test_a_falling_attack_has_converged_by_the_rule():
    assert convergence({1.0: 0.54, 4.0: 0.46}, budget=1.0, metric="ssim").converged


def test_other_metrics_gain_in_their_privacy_direction_with_a_relative_tolerance():
    # masked MSE: larger is more private, so a stronger attack lowers it.
    verdict = convergence({1.0: 0.100, 4.0: 0.090}, budget=1.0, metric="masked_mse_minmax")
    assert verdict.gain == pytest.approx(0.010) and verdict.tolerance == pytest.approx(RELATIVE_TOLERANCE * 0.100)
    assert not verdict.converged


@pytest.mark.parametrize("means, metric", [({1.0: 0.9}, "ssim"), ({1.0: 0.9, 2.0: 0.95}, "ssim"),
                                           ({1.0: math.nan, 4.0: 0.9}, "ssim"), ({1.0: 0.9, 4.0: 0.9}, "accuracy")])
def test_unknown_without_four_times_the_budget_or_a_direction(means, metric):
    assert convergence(means, budget=1.0, metric=metric) is None


def test_headline_metrics_are_read_from_the_rows_or_filled_from_the_registry():
    older = pd.DataFrame({"attack": ["none", "decoder-ref", "unsplit", "har-recon", "har-reid", "not-registered"]})
    assert headline_metrics(with_attack_facts(older)) == {
        "decoder-ref": "ssim", "unsplit": "masked_mse_minmax", "har-recon": "median_r2", "har-reid": "reid_accuracy"}
    recorded = pd.DataFrame({"attack": ["plugin", "none"], "headline_metric": ["lpips", None]})
    assert headline_metrics(with_attack_facts(recorded)) == {"plugin": "lpips"}  # a recorded fact is kept
