"""Grid expansion checks each defense against the victim's cut at the dataset's own input shape."""
from __future__ import annotations

import pytest
import torch

from bench.errors import GridError
from bench.run.grid import GridSpec, expand


def _block_local(dataset: str, tile: int) -> GridSpec:
    return GridSpec(datasets=(dataset,), defenses=("block-local",), seeds=(0,), victim="simplecnn",
                    knobs={"cr": (8.0,), "tile": (tile,)})


def test_a_tile_is_checked_against_the_cut_of_the_datasets_inputs():
    # SimpleCNN's L2H cut is 64x8x8 on 32x32 RGB and 64x7x7 on 28x28 grey
    assert {c.defense for c in expand(_block_local("cifar10-jpeg", 2))} == {"raw", "block-local"}
    with pytest.raises(GridError, match="tile 2 does not divide the 7×7 cut map"):
        expand(_block_local("fashion-mnist", 2))
    with pytest.raises(GridError, match="tile 3 does not divide the 8×8 cut map"):
        expand(_block_local("cifar10-jpeg", 3))


def test_building_a_victim_to_check_a_grid_leaves_the_global_random_stream_alone():
    torch.manual_seed(0)
    expand(_block_local("cifar10-jpeg", 2))
    after = torch.rand(3)
    torch.manual_seed(0)
    assert torch.equal(torch.rand(3), after)


def test_an_iid_partition_refuses_a_dirichlet_concentration():
    spec = GridSpec(datasets=("digits",), defenses=("raw",), seeds=(0,), clients=2, alpha=0.5)
    with pytest.raises(GridError, match="an iid partition takes none"):
        expand(spec)


def _attacked(attacks: tuple[str, ...], budgets: tuple, **spec) -> list:
    grid = GridSpec(**{"datasets": ("mnist",), "defenses": ("raw",), "seeds": (0,), "profile": "cpu", **spec},
                    attacks=attacks, knobs={"budget": budgets})
    return [c for c in expand(grid) if c.attack != "none"]


def test_the_measured_budget_is_the_budget_tables_and_names_the_same_cells():
    measured = _attacked(("sdar", "decoder-ref", "prior"), ("measured",))
    assert [(c.attack, c.knob("budget", 1.0)) for c in measured] == [("sdar", 16.0), ("decoder-ref", 1.0), ("prior", 1.0)]
    explicit = _attacked(("sdar",), (16.0,)) + _attacked(("decoder-ref", "prior"), (1.0,))
    assert [c.id for c in measured] == [c.id for c in explicit]
    assert [c.knob("budget", 1.0) for c in _attacked(("sdar",), ("measured", 4.0))] == [16.0, 4.0]


def test_an_attack_with_no_measured_budget_on_the_setting_is_refused_in_one_line():
    with pytest.raises(GridError, match=r"^attack 'decoder-z' has no measured budget on paper mnist mnistnet/split-2 "
                                        r"\(its budget table has: cpu cifar10-jpeg simplecnn/l2h; cpu mnist mnistnet/split-2\)"):
        _attacked(("decoder-z",), ("measured",), profile="paper")
    with pytest.raises(GridError, match="attack 'sdar' has no measured budget on smoke mnist"):
        _attacked(("sdar",), ("measured",), profile="smoke")
