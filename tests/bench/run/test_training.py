import torch

from bench.run.cell import Cell
from bench.data import DATASETS
from bench.data.splits import carve
from bench.profiles import get_profile
from bench.run.training import train_victim

CELL = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="lightsplit-l", defense_knobs={"cr": 8.0, "width": 32},
            profile="smoke", seed=3)


def test_trained_victim_is_cached_by_victim_key_and_reloaded(tmp_path):
    data = carve(DATASETS.get("digits")(tmp_path), get_profile("smoke"))
    first = train_victim(CELL, data=data, profile=get_profile("smoke"), cache_dir=tmp_path)
    assert not first.from_cache and (tmp_path / f"{CELL.victim_key}.pt").exists()
    again = train_victim(CELL, data=data, profile=get_profile("smoke"), cache_dir=tmp_path)
    assert again.from_cache and again.metrics == first.metrics
    for (name, a), b in zip(first.model.state_dict().items(), again.model.state_dict().values()):
        assert torch.equal(a, b), name


def test_observers_force_a_real_training_run(tmp_path):
    data = carve(DATASETS.get("digits")(tmp_path), get_profile("smoke"))
    train_victim(CELL, data=data, profile=get_profile("smoke"), cache_dir=tmp_path)
    seen = []

    class Counter:
        def on_step(self, view):
            seen.append(view.step)

    watched = train_victim(CELL, data=data, profile=get_profile("smoke"), cache_dir=tmp_path, observers=[Counter()])
    assert not watched.from_cache and seen == list(range(len(seen))) and len(seen) > 0
