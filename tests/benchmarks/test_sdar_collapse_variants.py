"""benchmarks/sdar_collapse_variants.py: each variant builds the SDAR it names; bad variants stop it."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from attacks.sdar import SDAR

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def variants():
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(BENCHMARKS))  # the script imports its sibling stored_sdar_cells
        spec = importlib.util.spec_from_file_location("sdar_collapse_variants_script", BENCHMARKS / "sdar_collapse_variants.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


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
