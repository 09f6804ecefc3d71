"""benchmarks/sdar_failure_signal.py: choosing among SDAR variants on one victim, scored against the best."""
from __future__ import annotations

import pandas as pd
import pytest

from tests.benchmarks.scripts import load_benchmark_script


@pytest.fixture(scope="module")
def failure_signal():
    return load_benchmark_script("sdar_failure_signal")


def _cells(rows: list[tuple]) -> pd.DataFrame:
    columns = ["defense", "cr", "seed", "attack_budget", "accuracy", "attack_moment_tie", "attack_lambda1_scale", "ssim",
               "image MK-MMD - floor"]
    return pd.DataFrame(rows, columns=columns)


def test_each_choice_gives_up_what_separates_it_from_the_best_variant_on_its_victim(failure_signal):
    cells = _cells([
        ("raw", None, 2, 4.0, 0.4355, 0.0, 1.0, 0.10, 0.90),  # as released
        ("raw", None, 2, 4.0, 0.4355, 1.0, 1.0, 0.40, 0.10),  # tied: the best
        ("raw", None, 2, 4.0, 0.4355, 0.0, 2.5, 0.30, 0.05),  # the lowest signal
        ("raw", None, 2, 4.0, 0.5000, 0.0, 1.0, 0.90, 0.00),  # another victim, alone: no choice to make
    ])
    table = failure_signal.variant_choices(cells)
    assert table.loc["lowest image signal", "mean SSIM lost"] == pytest.approx(0.1)
    assert table.loc["tied (moment_tie 1)", "mean SSIM lost"] == pytest.approx(0.0)
    assert table.loc["as released", "max SSIM lost"] == pytest.approx(0.3)
    assert table["victims"].tolist() == [1, 1, 1] and table["best"].tolist() == [0, 1, 0]
