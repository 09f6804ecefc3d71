import math
from functools import reduce

import pytest
import torch

from defenses import build_defense
from defenses.hadamard import SubsampledHadamardProjection, factor_sizes, hadamard, kronecker_apply


def sylvester_hadamard(n: int) -> torch.Tensor:
    """The slow path: H_n = H_2 ⊗ … ⊗ H_2, normalised."""
    h2 = torch.tensor([[1.0, 1.0], [1.0, -1.0]], dtype=torch.float64)
    levels = int(math.log2(n))
    return reduce(torch.kron, [h2] * levels, torch.ones(1, 1, dtype=torch.float64)) / math.sqrt(n)


@pytest.mark.parametrize("n", [1, 2, 8, 64])
def test_hadamard_matrix_is_sylvester_and_orthonormal(n):
    assert torch.allclose(hadamard(n).double(), sylvester_hadamard(n), atol=1e-7)
    assert torch.allclose(hadamard(n) @ hadamard(n).T, torch.eye(n), atol=1e-6)


def test_hadamard_rejects_a_size_that_is_not_a_power_of_two():
    with pytest.raises(ValueError, match="power-of-two"):
        hadamard(12)


@pytest.mark.parametrize("d,sizes", [(1152, [9, 16, 8]), (4096, [1, 16, 16, 16]), (105, [105]), (24, [3, 8]), (64, [1, 8, 8])])
def test_factor_sizes(d, sizes):
    assert factor_sizes(d) == sizes
    assert math.prod(sizes) == d and all(f <= 32 for f in sizes[1:])


def test_kronecker_apply_equals_the_explicit_kronecker_product():
    """Fast path (mode products) against the slow path (the formed Kronecker matrix)."""
    factors = [torch.randn(3, 3, dtype=torch.float64), torch.randn(4, 4, dtype=torch.float64),
               torch.randn(2, 2, dtype=torch.float64)]
    x = torch.randn(5, 24, dtype=torch.float64)
    full = reduce(torch.kron, factors)
    assert torch.allclose(kronecker_apply(x, factors), x @ full.T, atol=1e-10)


@pytest.mark.parametrize("cut,k", [((8, 12, 12), 144), ((64, 8, 8), 512), ((3, 5, 7), 13), ((1152,), 1152)])
def test_columns_are_orthonormal(cut, k):
    R = SubsampledHadamardProjection(cut_shape=cut, k=k, seed=4).R
    assert R.shape == (math.prod(cut), k)
    assert torch.allclose(R.T @ R, torch.eye(k), atol=1e-5)


@pytest.mark.parametrize("cut,k", [((8, 12, 12), 36), ((64, 8, 8), 512)])
def test_fast_transform_equals_the_dense_matrix(cut, k):
    proj = SubsampledHadamardProjection(cut_shape=cut, k=k, seed=1)
    R = proj.R
    z = torch.randn(6, *cut)
    assert torch.allclose(proj.project(z), z.flatten(1) @ R, atol=1e-4)
    payload = torch.randn(6, k)
    assert torch.allclose(proj.lift(payload), (payload @ R.T).view(6, *cut), atol=1e-5)


def test_same_seed_same_matrix_other_seed_other_matrix():
    make = lambda seed: SubsampledHadamardProjection(cut_shape=(8, 12, 12), k=144, seed=seed).R  # noqa: E731
    assert torch.equal(make(2), make(2))
    assert not torch.allclose(make(2), make(3))


def test_every_input_coordinate_reaches_the_payload():
    """The mix spreads every coordinate of z over the kept rows (no coordinate is dropped)."""
    R = SubsampledHadamardProjection(cut_shape=(8, 12, 12), k=144, seed=0).R
    assert (R.abs().sum(1) > 0).all()


@pytest.mark.parametrize("name", ["lightsplit-f-srht", "lightsplit-l-srht"])
def test_srht_variants_send_d_over_cr_values_and_publish_R(name):
    defense = build_defense(name, cut_shape=(8, 12, 12), seed=0, cr=8)
    z = torch.randn(4, 8, 12, 12)
    payload = defense.encode(z)
    R = defense.public_state()["R"]
    assert payload.shape == (4, 144)
    assert torch.allclose(payload, z.flatten(1) @ R, atol=1e-4)
