"""Input checks up front (seeds), and one cell id, one set of numbers: a cell fixes its own torch threads
whichever process runs it (``--jobs 1`` runs cells in the driver, ``--jobs N`` in one-thread workers)."""
from pathlib import Path

import pytest
import torch

from bench.run.cell import Cell
from bench.run.cell_runner import RunContext, execute_cell
from tests.bench.cli.runner import run_cli
from tests.bench.run.faults import one_error_line, records, run

CELL = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=0, attack="decoder-ref")


@pytest.mark.parametrize("seeds,bad", [("-1", "-1"), ("0,4294967296", "4294967296")])
def test_a_seed_outside_numpy_range_is_one_line_and_nothing_is_written(capsys, out, seeds, bad):
    before = records(out)
    code, stdout, stderr = run(capsys, out, "--seeds", seeds)
    assert code == 2 and stdout == ""
    assert one_error_line(stderr) == (f"error: seed {bad} is not an integer in [0, 2**32) (seeds seed NumPy, which "
                                      "takes no other)")
    assert records(out) == before
    assert sorted(p.name for p in out.iterdir()) == ["cells", "checkpoints", "results.csv", "results.parquet"]


def test_a_grid_file_seed_is_checked_the_same_way(capsys, tmp_path):
    config = tmp_path / "grid.toml"
    config.write_text(f'out = "{tmp_path / "out"}"\n[[grid]]\ndataset = "digits"\ndefense = "raw"\nseeds = [0, -3]\n'
                      'profile = "smoke"\n')
    code, _, stderr = run_cli(capsys, ["run", "--config", str(config), "--quiet"])
    assert code == 2 and "seed -3 is not an integer in [0, 2**32)" in one_error_line(stderr)
    assert not (tmp_path / "out").exists()


def _numbers(record) -> dict:
    return {k: v for k, v in record.metrics.items() if not k.endswith("_seconds")}


def test_a_cell_gives_the_same_numbers_whatever_threads_its_process_has(tmp_path):
    """The serial path (the driver's threads, 2 on this machine) and a worker's (one thread) agree to the digit."""
    records_at = {}
    before = torch.get_num_threads()
    try:
        for threads in (2, 1):
            torch.set_num_threads(threads)
            records_at[threads] = execute_cell(CELL, RunContext(data_root=tmp_path))
            assert torch.get_num_threads() == threads  # given back as it was
    finally:
        torch.set_num_threads(before)
    assert records_at[2].status == records_at[1].status == "ok"
    assert _numbers(records_at[2]) == _numbers(records_at[1])
    assert records_at[2].provenance["torch_threads"] == records_at[1].provenance["torch_threads"] == "1"


def test_the_threads_a_run_asks_for_reach_every_cell_and_every_executor(capsys, out):
    from bench.cli.common import make_executor

    assert make_executor("local", 2, None, device="cpu", threads=3).threads == 3
    assert make_executor("ray", 1, None, device="cpu", threads=3).num_cpus == 3
    code, _, _ = run(capsys, out, "--seeds", "1", "--threads", "2")
    assert code == 0
    import json

    stored = [json.loads(p.read_text()) for p in Path(out, "cells").glob("*.json")]
    assert sorted(r["provenance"]["torch_threads"] for r in stored) == ["1", "2"]
