"""benchmarks/sdar_collapse_variants.py: each variant builds the SDAR it names; bad variants stop it."""
from __future__ import annotations

import sys

import pytest

from attacks.sdar import SDAR
from tests.benchmarks.scripts import load_benchmark_script


@pytest.fixture(scope="module")
def variants():
    return load_benchmark_script("sdar_collapse_variants")


@pytest.mark.parametrize(("variant", "cell_tie", "built_tie"), [
    ("released", 0.0, 0.0), ("released", 1.0, 1.0), ("tie", 0.0, 1.0), ("realign", 0.0, 0.0), ("nearest", 0.0, 0.0),
])
def test_only_the_tie_variant_changes_the_moment_tie(variants, monkeypatch, variant, cell_tie, built_tie):
    seen = {}
    monkeypatch.setattr(SDAR, "__init__", lambda self, **kwargs: seen.update(kwargs))
    variants.sdar_variant(variant, [])(view=None, profile="smoke", moment_tie=cell_tie)
    assert seen["moment_tie"] == built_tie


def test_an_unknown_variant_stops_with_one_line(variants, monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "argv", ["x", "--results", str(tmp_path), "--cells", "abc", "--variants", "tie,tide"])
    with pytest.raises(SystemExit, match=r"unknown variants \['tide'\]"):
        variants.main()
