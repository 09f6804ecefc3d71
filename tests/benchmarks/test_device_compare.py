"""benchmarks/device/compare.py: a folder against itself agrees exactly and runs at 1x; a known shift
and a known speed-up are read back."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from bench.run.cell import Cell
from bench.run.record import CellRecord

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "device" / "compare.py"


@pytest.fixture(scope="module")
def compare():
    spec = importlib.util.spec_from_file_location("device_compare", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["device_compare"] = module
    spec.loader.exec_module(module)
    return module


def _records(ssim_of_seed, wall: float, threads: str = "1") -> dict:
    out = {}
    for seed in range(3):
        cell = Cell(dataset="mnist", victim="mnistnet", cut="split-2", profile="cpu", defense="raw", attack="decoder-ref", seed=seed)
        record = CellRecord(cell, "ok", {"accuracy": 0.9, "ssim": ssim_of_seed(seed)}, provenance={"torch_threads": threads},
                            wall_seconds=wall, headline_metric="ssim")
        out[cell.id] = record
    return out


def test_a_folder_agrees_with_itself(compare):
    cpu = _records(lambda s: 0.5 + 0.01 * s, wall=100.0)
    rows = {r["metric"]: r for r in compare.agreement_rows(cpu, cpu)}
    assert rows["ssim"]["gap_in_sd"] == 0 and rows["ssim"]["n"] == 3
    assert rows["accuracy"]["cpu_sd"] == 0 and rows["accuracy"]["gap_in_sd"] is None  # no spread: no ratio


def test_a_shift_is_read_in_cpu_standard_deviations(compare):
    cpu = _records(lambda s: 0.5 + 0.01 * s, wall=100.0)
    gpu = _records(lambda s: 0.52 + 0.01 * s, wall=2.0)
    ssim = next(r for r in compare.agreement_rows(gpu, cpu) if r["metric"] == "ssim")
    assert ssim["gap_in_sd"] == pytest.approx(2.0)  # 0.02 against a spread of 0.01


def test_speed_is_the_median_cpu_over_gpu_ratio_on_one_thread_cells(compare):
    cpu, gpu = _records(lambda s: 0.5, wall=100.0), _records(lambda s: 0.5, wall=2.0)
    (row,) = compare.speed_rows(gpu, cpu)
    assert (row["attack"], row["n"], row["speedup"]) == ("decoder-ref", 3, 50.0)
    assert compare.speed_rows(gpu, _records(lambda s: 0.5, wall=100.0, threads="2")) == []  # not one core
