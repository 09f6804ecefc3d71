"""Cached victims: tensors and plain data, checksummed, keyed by the victim and the code that shapes it."""
import os

import pytest
import torch

from bench.profiles import get_profile
from bench.run import checkpoints, training
from bench.run.cell import Cell
from bench.run.training import train_victim

CELL = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="lightsplit-l", defense_knobs={"cr": 8.0, "width": 32},
            profile="smoke", seed=3)
SMOKE = get_profile("smoke")


@pytest.fixture(scope="module")
def data(digits):
    return digits


def _checkpoint(cache_dir):
    (path,) = cache_dir.glob(f"{CELL.victim_key}-*.pt")
    return path


def _same_victim(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.model.state_dict().values(), b.model.state_dict().values()))


def _without_time(metrics: dict) -> dict:
    return {k: v for k, v in metrics.items() if k != "train_seconds"}


def _retrains_after(damage, tmp_path, data, capsys, needle: str) -> None:
    """``damage`` spoils the cached checkpoint; the next call warns once, retrains the same victim and
    caches it again."""
    first = train_victim(CELL, data=data, profile=SMOKE, cache_dir=tmp_path)
    capsys.readouterr()
    damage(_checkpoint(tmp_path))
    again = train_victim(CELL, data=data, profile=SMOKE, cache_dir=tmp_path)
    err = capsys.readouterr().err
    assert not again.from_cache and _same_victim(first, again)
    assert _without_time(again.metrics) == _without_time(first.metrics)
    assert len(err.strip().splitlines()) == 1 and err.startswith("warning: checkpoint ") and needle in err, err
    assert train_victim(CELL, data=data, profile=SMOKE, cache_dir=tmp_path).from_cache  # cached again


def test_trained_victim_is_cached_by_victim_key_and_code_and_reloaded(tmp_path, data):
    first = train_victim(CELL, data=data, profile=SMOKE, cache_dir=tmp_path)
    assert not first.from_cache and _checkpoint(tmp_path).name.startswith(f"{CELL.victim_key}-")
    again = train_victim(CELL, data=data, profile=SMOKE, cache_dir=tmp_path)
    assert again.from_cache and again.metrics == first.metrics
    for (name, a), b in zip(first.model.state_dict().items(), again.model.state_dict().values()):
        assert torch.equal(a, b), name


def test_checkpoints_hold_tensors_and_plain_data_only(tmp_path, data):
    train_victim(CELL, data=data, profile=SMOKE, cache_dir=tmp_path)
    saved = torch.load(_checkpoint(tmp_path), weights_only=True)
    assert set(saved) == {"state", "metrics", "cell", "checksum"}
    assert all(isinstance(v, torch.Tensor) for v in saved["state"].values())
    assert all(v is None or isinstance(v, (int, float)) for v in saved["metrics"].values())
    assert Cell.from_dict(saved["cell"]) == CELL


def test_a_truncated_checkpoint_is_discarded_and_the_victim_retrained(tmp_path, data, capsys):
    def truncate(path):
        os.truncate(path, path.stat().st_size // 2)

    _retrains_after(truncate, tmp_path, data, capsys, "deleted, the victim trains again")


def test_a_checkpoint_whose_tensor_changed_fails_its_checksum(tmp_path, data, capsys):
    def tamper(path):
        saved = torch.load(path, weights_only=True)
        name = next(iter(saved["state"]))
        saved["state"][name] = saved["state"][name] + 1
        torch.save(saved, path)

    _retrains_after(tamper, tmp_path, data, capsys, "checksum mismatch")


def test_a_checkpoint_that_does_not_fit_the_model_is_discarded(tmp_path, data, capsys):
    def reshape(path):
        saved = torch.load(path, weights_only=True)
        name = next(iter(saved["state"]))
        saved["state"][name] = saved["state"][name].flatten()
        saved["checksum"] = checkpoints._checkpoint_checksum(saved["state"], saved["metrics"], saved["cell"])
        torch.save(saved, path)

    _retrains_after(reshape, tmp_path, data, capsys, "do not fit the model")


class _RunsCode:
    """Unpickling this runs code: what ``weights_only=False`` would allow a foreign checkpoint to do."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_checkpoint_is_loaded_as_weights_only_and_code_in_it_never_runs(tmp_path, data, capsys):
    marker = tmp_path / "ran"

    def plant(path):
        saved = torch.load(path, weights_only=True)
        saved["metrics"] = _RunsCode(str(marker))
        torch.save(saved, path)

    _retrains_after(plant, tmp_path, data, capsys, "checkpoint")
    assert not marker.exists()


def test_a_checkpoint_of_other_code_is_not_reused(tmp_path, data, monkeypatch):
    real = checkpoints.victim_code_hash
    monkeypatch.setattr(checkpoints, "victim_code_hash", lambda model, cell: "0123456789ab")
    train_victim(CELL, data=data, profile=SMOKE, cache_dir=tmp_path)
    monkeypatch.setattr(checkpoints, "victim_code_hash", real)
    assert not train_victim(CELL, data=data, profile=SMOKE, cache_dir=tmp_path).from_cache
    assert len(list(tmp_path.glob(f"{CELL.victim_key}-*.pt"))) == 2


def test_the_code_hash_follows_the_bytes_of_the_code_that_shapes_a_victim(tmp_path, data, monkeypatch):
    model = training.build_model(CELL, data)
    hashes = []
    for text in ("x = 1\n", "x = 2\n"):
        source = tmp_path / text[4] / "engine.py"
        source.parent.mkdir()
        source.write_text(text)
        monkeypatch.setattr(checkpoints, "code_files", lambda names, source=source: frozenset({source}))
        hashes.append(checkpoints.victim_code_hash(model, CELL))
    assert hashes[0] != hashes[1]
    assert checkpoints.victim_code_hash(model, CELL) == hashes[1]
    for part in ("victims", "defenses", "bench/run/engine.py", "bench/run/training.py", "bench/run/checkpoints.py", "bench/profiles.py"):
        assert part in checkpoints.VICTIM_CODE
