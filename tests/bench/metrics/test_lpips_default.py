"""LPIPS's trunk is found under the data root by default; --lpips-weights still overrides it."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from bench.cli import main
from bench.metrics.lpips_weights import SHARED_TRUNK, trunk_under
from bench.run.store import ResultStore

SMOKE = ["run", "--dataset", "digits", "--defense", "raw", "--profile", "smoke", "--quiet", "--device", "cpu"]


def test_the_trunk_under_a_data_root_is_found_and_only_there(tmp_path):
    assert trunk_under(tmp_path) is None and trunk_under(None) is None
    (tmp_path / SHARED_TRUNK).parent.mkdir()
    (tmp_path / SHARED_TRUNK).write_bytes(b"weights")
    assert trunk_under(tmp_path) == (tmp_path / SHARED_TRUNK).resolve()


@pytest.mark.parametrize("override", [False, True])
def test_a_run_reads_the_data_roots_trunk_unless_told_otherwise(tmp_path, override):
    root = tmp_path / "data"
    (root / SHARED_TRUNK).parent.mkdir(parents=True)
    (root / SHARED_TRUNK).write_bytes(b"shared")
    args = [*SMOKE, "--data-root", str(root), "--out", str(tmp_path / "out")]
    named = tmp_path / "mine.pth"
    if override:
        import torch
        from torchvision.models import alexnet

        torch.save(alexnet().state_dict(), named)  # untrained: only its shapes are checked here
        args += ["--lpips-weights", str(named)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    (record,) = ResultStore(tmp_path / "out").records()
    expected = named.resolve() if override else (root / SHARED_TRUNK).resolve()
    assert record.provenance["lpips_weights"] == str(expected)
