
import pytest

from bench.profiles import get_profile
from bench.run.cell import Cell
from bench.run.training import train_victim

CELL = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="lightsplit-l", defense_knobs={"cr": 8.0, "width": 32},
            profile="smoke", seed=3)
SMOKE = get_profile("smoke")


@pytest.fixture(scope="module")
def data(digits):
    return digits


def test_observers_force_a_real_training_run(tmp_path, data):
    train_victim(CELL, data=data, profile=SMOKE, cache_dir=tmp_path)
    seen = []

    class Counter:
        def on_step(self, view):
            seen.append(view.step)

    watched = train_victim(CELL, data=data, profile=SMOKE, cache_dir=tmp_path, observers=[Counter()])
    assert not watched.from_cache and seen == list(range(len(seen))) and len(seen) > 0
