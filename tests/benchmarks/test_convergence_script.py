"""benchmarks/convergence.py: budgets compared on the seeds stored at both, configurations kept apart."""
from __future__ import annotations

import pandas as pd
import pytest

from tests.benchmarks.scripts import load_benchmark_script


@pytest.fixture(scope="module")
def convergence():
    return load_benchmark_script("convergence")


def _cells(rows: list[tuple[str, float, float, int, float]]) -> pd.DataFrame:
    """Long rows (defense, lambda_wcc, budget, seed, ssim) of one SDAR configuration each."""
    return pd.DataFrame([
        {"dataset": "d", "victim": "v", "cut": "c", "profile": "cpu", "defense": defense, "cr": 8.0,
         "lambda_wcc": wcc, "attack": "sdar", "attack_budget": budget, "seed": seed, "metric": "ssim",
         "value": value, "status": "ok"}
        for defense, wcc, budget, seed, value in rows
    ])


def test_a_gain_is_taken_on_the_seeds_stored_at_both_budgets(convergence):
    # x1 on three seeds (mean 0.4), x4 on seed 0 only: seed 0 gains 0.01, the unpaired means 0.31.
    long = _cells([("raw", 0.0, 1.0, 0, 0.70), ("raw", 0.0, 1.0, 1, 0.30), ("raw", 0.0, 1.0, 2, 0.20),
                   ("raw", 0.0, 4.0, 0, 0.71)])
    (row,) = convergence.convergence_table(long).to_dict("records")
    assert row["x1"] == pytest.approx(0.4) and row["seeds x1"] == 3
    assert row["seeds x4 vs x1"] == 1
    assert row["gains x4 vs x1"] == "s0 +0.0100"
    assert row["converged"] == "converged" and row["converged at x4"] == "unknown"  # x4 is the highest stored


def test_seeds_are_judged_one_by_one_not_on_their_mean(convergence):
    # x4 against x16: +0.066, +0.080, -0.126 (mean +0.0067): one seed collapses, so unstable.
    long = _cells([("raw", 0.0, 4.0, 0, 0.480), ("raw", 0.0, 4.0, 1, 0.490), ("raw", 0.0, 4.0, 2, -0.060),
                   ("raw", 0.0, 16.0, 0, 0.546), ("raw", 0.0, 16.0, 1, 0.570), ("raw", 0.0, 16.0, 2, -0.186)])
    (row,) = convergence.convergence_table(long).to_dict("records")
    assert row["gains x16 vs x4"] == "s0 +0.0660, s1 +0.0800, s2 -0.1260"
    assert row["converged at x4"] == "unstable"


def test_configurations_differing_in_any_factor_are_separate_rows(convergence):
    long = _cells([("lightsplit-f", 0.0, 1.0, 0, 0.2), ("lightsplit-f", 0.0, 4.0, 0, 0.5),
                   ("lightsplit-f", 0.1, 1.0, 0, 0.1), ("lightsplit-f", 0.1, 4.0, 0, 0.1),
                   ("lightsplit-f", 0.1, 16.0, 0, 0.1)])
    table = convergence.convergence_table(long).set_index("lambda_wcc")
    assert table.loc[0.0, "converged"] == "not converged" and table.loc[0.1, "converged"] == "converged"
    assert table.loc[0.1, "converged at x4"] == "converged" and pd.isna(table.loc[0.0, "x16"])


def test_a_configuration_stored_at_one_budget_is_left_out(convergence):
    long = _cells([("raw", 0.0, 1.0, 0, 0.7), ("topk", 0.0, 1.0, 0, 0.5), ("topk", 0.0, 4.0, 0, 0.5)])
    assert convergence.convergence_table(long)["defense"].tolist() == ["topk"]
