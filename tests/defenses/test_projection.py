import math

import pytest
import torch

from defenses import DefenseConfigError, build_defense
from defenses.payload import cross_to_server
from defenses.projection import BlockLocalProjection, OrthogonalProjection, orthonormal_columns

CUT = (8, 12, 12)  # MnistNet split-2, d = 1152


@pytest.mark.parametrize("rows,cols", [(1152, 144), (4096, 128), (64, 64)])
def test_columns_are_orthonormal(rows, cols):
    R = orthonormal_columns(rows, cols, seed=3)
    assert torch.allclose(R.T @ R, torch.eye(cols), atol=1e-5)


def test_same_seed_same_matrix_other_seed_other_matrix():
    assert torch.equal(orthonormal_columns(100, 10, 1), orthonormal_columns(100, 10, 1))
    assert not torch.allclose(orthonormal_columns(100, 10, 1), orthonormal_columns(100, 10, 2))


@pytest.mark.parametrize("cr", [8, 16, 32])
def test_payload_has_d_over_cr_values(cr):
    defense = build_defense("lightsplit-f", cut_shape=CUT, seed=0, cr=cr)
    payload = defense.encode(torch.randn(5, *CUT))
    assert payload.shape == (5, 1152 // cr)


@pytest.mark.parametrize("name", ["lightsplit-f", "lightsplit-f-srht"])
def test_fixed_liftback_is_the_orthogonal_projection(name):
    defense = build_defense(name, cut_shape=CUT, seed=0, cr=8)
    R = defense.public_state()["R"]
    z = torch.randn(4, *CUT, dtype=torch.float32)
    z_hat = defense.decode(defense.encode(z))
    expected = (z.flatten(1) @ R @ R.T).view_as(z)
    assert torch.allclose(z_hat, expected, atol=1e-5)
    # P = RRᵀ is idempotent: projecting the lift-back again changes nothing
    assert torch.allclose(defense.decode(defense.encode(z_hat)), z_hat, atol=1e-5)


@pytest.mark.parametrize(
    "name,params",
    [("lightsplit-f", {"cr": 8}), ("lightsplit-f-srht", {"cr": 8}), ("block-local", {"cr": 8, "tile": 3})],
)
def test_gradient_reaching_z_is_R_times_payload_gradient(name, params):
    """Across the cut the client receives ∇z̃ and autograd must give ∇z = R ∇z̃."""
    torch.manual_seed(0)
    defense = build_defense(name, cut_shape=CUT, seed=0, **params)
    z = torch.randn(3, *CUT, requires_grad=True)
    payload = defense.encode(z)
    received = cross_to_server(payload)
    loss = (defense.decode(received) ** 3).sum()  # any non-linear server loss
    loss.backward()
    grad_payload = received.grad
    payload.backward(grad_payload)
    if name.startswith("lightsplit-f"):
        expected = (grad_payload @ defense.public_state()["R"].T).view_as(z)
    else:
        expected = defense.projection.lift(grad_payload)
    assert torch.allclose(z.grad, expected, atol=1e-5)


def test_block_local_shapes_and_orthonormal_tile_matrix():
    proj = BlockLocalProjection(cut_shape=CUT, k=144, tile=3, seed=0)
    assert proj.tiles == 16 and proj.R.shape == (8 * 9, 9)
    assert torch.allclose(proj.R.T @ proj.R, torch.eye(9), atol=1e-5)
    z = torch.randn(2, *CUT)
    assert proj.project(z).shape == (2, 144)
    assert proj.lift(proj.project(z)).shape == (2, *CUT)


def test_block_local_uneven_budget_goes_to_the_first_tiles():
    proj = BlockLocalProjection(cut_shape=CUT, k=150, tile=3, seed=0)  # 16 tiles: 6 get 10, 10 get 9
    per_tile = proj.mask.sum(1)
    assert per_tile.tolist() == [10] * 6 + [9] * 10
    z = torch.randn(2, *CUT)
    assert proj.project(z).shape == (2, 150)
    # lifting is still an orthogonal projection (idempotent)
    once = proj.lift(proj.project(z))
    assert torch.allclose(proj.lift(proj.project(once)), once, atol=1e-5)


def test_block_local_tile_acts_locally():
    """Changing one tile of z changes only that tile of the lift-back."""
    proj = BlockLocalProjection(cut_shape=CUT, k=144, tile=3, seed=0)
    z = torch.randn(1, *CUT)
    z2 = z.clone()
    z2[:, :, :3, :3] += 1.0
    diff = (proj.lift(proj.project(z2)) - proj.lift(proj.project(z))).abs()
    assert diff[:, :, 3:, :].max() < 1e-6 and diff[:, :, :, 3:].max() < 1e-6
    assert diff[:, :, :3, :3].max() > 1e-3


def test_block_with_whole_map_tile_matches_a_global_projection_size():
    proj = BlockLocalProjection(cut_shape=CUT, k=144, tile=12, seed=0)
    assert proj.tiles == 1 and proj.R.shape == (1152, 144)


@pytest.mark.parametrize(
    "name,params",
    [("lightsplit-f", {"cr": 7}), ("lightsplit-f", {"cr": 2000}), ("block-local", {"cr": 8, "tile": 5})],
)
def test_unrealisable_parameters_fail_with_one_line(name, params):
    with pytest.raises(DefenseConfigError) as err:
        build_defense(name, cut_shape=CUT, seed=0, **params)
    assert "\n" not in str(err.value)


def test_lightsplit_l_sends_the_same_payload_and_learns_the_liftback():
    f = build_defense("lightsplit-f", cut_shape=CUT, seed=4, cr=16)
    learned = build_defense("lightsplit-l", cut_shape=CUT, seed=4, cr=16, width=64)
    z = torch.randn(3, *CUT)
    assert torch.equal(f.encode(z), learned.encode(z))
    assert learned.client_parameters() == [] and len(learned.server_parameters()) > 0
    assert learned.decode(learned.encode(z)).shape == (3, *CUT)


def test_energy_kept_by_a_random_projection_is_about_k_over_d():
    proj = OrthogonalProjection(cut_shape=(1152,), k=144, seed=0)
    z = torch.randn(2000, 1152)
    kept = proj.project(z).pow(2).sum() / z.pow(2).sum()
    assert math.isclose(float(kept), 144 / 1152, rel_tol=0.05)
