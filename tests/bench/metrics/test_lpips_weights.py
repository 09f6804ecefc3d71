"""LPIPS on AlexNet weights read from a file (``--lpips-weights`` or torchvision's cache), never downloaded.

The weights here are a randomly initialised torchvision AlexNet's ``state_dict``: the plumbing is
what is tested, not the perceptual quality of the numbers.
"""
import hashlib
import math
import pickle
import shutil

import pandas as pd
import pytest
import torch
import torchvision

from bench.metrics import LpipsScorer, image_metrics, lpips_unavailable_reason
from bench.metrics.lpips_weights import ALEXNET_FILE, build_lpips, read_trunk, weights_provenance
from bench.run.cell_runner import RunContext
from bench.run.executors import _fresh
from tests.bench.cli.runner import run_cli


@pytest.fixture(scope="module")
def alexnet_file(tmp_path_factory):
    torch.manual_seed(0)
    model = torchvision.models.alexnet()  # random init: no weights are fetched
    path = tmp_path_factory.mktemp("weights") / "alexnet-random.pth"
    torch.save(model.state_dict(), path)
    return path


@pytest.fixture
def no_download(monkeypatch):
    """Any attempt to fetch weights fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("tried to download weights")

    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", refuse)
    monkeypatch.setattr(torch.hub, "download_url_to_file", refuse)
    monkeypatch.setattr(torchvision.models._api, "load_state_dict_from_url", refuse)


def _images(seed: int) -> torch.Tensor:
    return torch.rand(3, 1, 28, 28, generator=torch.Generator().manual_seed(seed))


def _assert_scores(scorer: LpipsScorer) -> None:
    truth = _images(1)
    same, reason = scorer(truth, truth)
    assert reason is None and torch.allclose(same, torch.zeros(3), atol=1e-6)
    different, reason = scorer(_images(2), truth)
    assert reason is None and torch.isfinite(different).all() and (different > 0).all()


def test_named_weights_file_is_read_into_the_trunk(alexnet_file, no_download):
    model = build_lpips(alexnet_file)
    stored = torch.load(alexnet_file, weights_only=True)
    assert torch.equal(model.net.slice1._modules["0"].weight, stored["features.0.weight"])
    assert torch.equal(model.net.slice5._modules["10"].bias, stored["features.10.bias"])
    assert lpips_unavailable_reason(alexnet_file) is None
    _assert_scores(LpipsScorer(weights=alexnet_file))


def test_torchvisions_cached_copy_is_used_without_downloading(alexnet_file, no_download, tmp_path, monkeypatch):
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path))
    (tmp_path / "checkpoints").mkdir()
    shutil.copy(alexnet_file, tmp_path / "checkpoints" / ALEXNET_FILE)
    assert lpips_unavailable_reason() is None
    _assert_scores(LpipsScorer())
    metrics, notes = image_metrics(_images(2), _images(1), masked=True)
    assert math.isfinite(metrics["lpips"]) and metrics["lpips"] > 0 and "lpips" not in notes
    assert weights_provenance()["lpips_weights"] == str(tmp_path / "checkpoints" / ALEXNET_FILE)


def test_provenance_names_the_file_and_its_sha256(alexnet_file, tmp_path, monkeypatch):
    expected = hashlib.sha256(alexnet_file.read_bytes()).hexdigest()
    assert weights_provenance(alexnet_file) == {"lpips_weights": str(alexnet_file), "lpips_weights_sha256": expected}
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path))
    assert weights_provenance() == {"lpips_weights": "absent", "lpips_weights_sha256": "absent"}


def test_a_file_that_is_not_alexnet_gives_none_and_a_reason(tmp_path):
    path = tmp_path / "other.pth"
    torch.save({"features.0.weight": torch.zeros(3)}, path)
    with pytest.raises(ValueError, match=r"features.0.weight should be \(64, 3, 11, 11\), got shape \(3,\)"):
        read_trunk(path)
    values, reason = LpipsScorer(weights=path)(_images(1), _images(1))
    assert values is None and "loading failed" in reason and "\n" not in reason
    values, reason = LpipsScorer(weights=tmp_path / "nosuch.pth")(_images(1), _images(1))
    assert values is None and "nosuch.pth not found" in reason


def test_the_weights_path_travels_to_worker_processes(alexnet_file, tmp_path):
    ctx = RunContext(data_root=tmp_path, lpips_weights=alexnet_file)
    assert pickle.loads(pickle.dumps(_fresh(ctx))).lpips_weights == alexnet_file


def _text_file(folder):
    (folder / "notes.pth").write_text("not torch")
    return folder / "notes.pth"


@pytest.mark.parametrize("make,needle", [
    (lambda folder: folder / "nosuch.pth", "does not exist"),
    (lambda folder: folder, "is a directory"),
    (_text_file, "not a PyTorch state dict"),
])
def test_bad_weights_option_is_one_line_exit_2_and_writes_nothing(capsys, tmp_path, make, needle):
    out = tmp_path / "out"
    args = ["run", "--dataset", "digits", "--profile", "smoke", "--no-download", "--quiet", "--out", str(out)]
    code, _, stderr = run_cli(capsys, args + ["--lpips-weights", str(make(tmp_path))])
    assert code == 2 and needle in stderr and "--lpips-weights" in stderr
    assert len(stderr.strip().splitlines()) == 1 and stderr.startswith("error: ")
    assert not out.exists()


def test_run_scores_lpips_and_records_the_weights(capsys, alexnet_file, tmp_path, no_download):
    out = tmp_path / "out"
    args = ["run", "--dataset", "digits", "--profile", "smoke", "--no-download", "--quiet", "--defense", "raw",
            "--attack", "fora", "--out", str(out), "--lpips-weights", str(alexnet_file)]
    code, stdout, _ = run_cli(capsys, args)
    assert code == 0, stdout
    table = pd.read_parquet(out / "results.parquet")
    lpips = table[table["metric"] == "lpips"]
    assert len(lpips) == 1 and math.isfinite(lpips["value"].iloc[0]) and lpips["value"].iloc[0] > 0
    assert lpips["note"].isna().all()
    assert set(table["lpips_weights"]) == {str(alexnet_file)}
    assert set(table["lpips_weights_sha256"]) == {hashlib.sha256(alexnet_file.read_bytes()).hexdigest()}
