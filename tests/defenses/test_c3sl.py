"""C3-SL: binding and unbinding against slow references and exact cases, its crosstalk level, its
bytes, padding, and the grouped-payload contract (take, concat, per-sample gradients)."""
import math

import pytest
import torch

from attacks.view import sample_vectors
from bench.run.attacker_views import observe_gradients
from bench.run.cell import Cell
from bench.run.training import build_model
from defenses import DefenseConfigError, build_defense
from defenses.c3sl import circular_convolution, circular_correlation, normalise_for_binding
from defenses.payload import concat, cross_to_server, nbytes, samples_of, take, wire_tensors

CUT = (8, 12, 12)
D = math.prod(CUT)


def slow_convolution(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``Σ_j a[j] b[(n − j) mod d]``, term by term."""
    d = len(a)
    return torch.stack([sum(a[j] * b[(n - j) % d] for j in range(d)) for n in range(d)])


def slow_correlation(key: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``Σ_m key[m] v[(n + m) mod d]``, term by term."""
    d = len(key)
    return torch.stack([sum(key[m] * v[(n + m) % d] for m in range(d)) for n in range(d)])


def c3sl(cr: int, cut: tuple[int, ...] = CUT, seed: int = 0):
    return build_defense("c3sl", cut_shape=cut, seed=seed, cr=cr)


@pytest.mark.parametrize("d", [7, 8])  # odd and even lengths (rfft's last bin differs)
def test_fft_binding_matches_the_direct_sums(d):
    g = torch.Generator().manual_seed(d)
    a, b = torch.randn(d, generator=g, dtype=torch.float64), torch.randn(d, generator=g, dtype=torch.float64)
    torch.testing.assert_close(circular_convolution(a, b), slow_convolution(a, b))
    torch.testing.assert_close(circular_correlation(a, b), slow_correlation(a, b))


def test_a_row_is_the_sum_of_its_samples_bound_to_their_slots_keys():
    defense = c3sl(3, cut=(7,)).double()
    defense.normalise = False  # the binding alone (the vector-cut normalisation is tested below)
    z = torch.randn(5, 7, dtype=torch.float64)
    payload = defense.encode(z)
    keys = defense.keys
    expected = torch.stack([
        sum(slow_convolution(keys[s], z[3 * g + s]) for s in range(3) if 3 * g + s < 5) for g in range(2)
    ])
    torch.testing.assert_close(payload.rows, expected)
    # the server unbinds sample i of row g with its slot's key
    torch.testing.assert_close(defense.decode(payload)[4], slow_correlation(keys[1], expected[1]))


def unitary_keys_on_disjoint_bands(r: int, d: int, generator: torch.Generator) -> tuple[torch.Tensor, list]:
    """Real keys whose spectra have modulus 1 on ``r`` disjoint sets of rfft bins and 0 elsewhere:
    ``conj(K_s) K_j`` is 0 for ``s ≠ j`` and 1 on band ``s``, so the keys' bindings are orthogonal."""
    bins = d // 2 + 1
    bands = [torch.arange(s, bins, r) for s in range(r)]
    keys = []
    for band in bands:
        spectrum = torch.zeros(bins, dtype=torch.complex128)
        phase = 2 * math.pi * torch.rand(len(band), generator=generator, dtype=torch.float64)
        spectrum[band] = torch.polar(torch.ones_like(phase), phase)
        spectrum[0] = spectrum[0].real.sign() if 0 in band else 0  # DC and Nyquist bins must be real
        if d % 2 == 0:
            spectrum[-1] = spectrum[-1].real.sign() if bins - 1 in band else 0
        keys.append(torch.fft.irfft(spectrum, n=d))
    return torch.stack(keys), bands


def test_orthogonal_keys_recover_band_limited_inputs_exactly():
    r, d, g = 4, 64, torch.Generator().manual_seed(1)
    defense = c3sl(r, cut=(4, 4, 4)).double()
    keys, bands = unitary_keys_on_disjoint_bands(r, d, g)
    defense.keys = keys
    # 11 samples: two full groups and one of three, sample i in band i mod r (its slot's)
    spectra = torch.zeros(11, d // 2 + 1, dtype=torch.complex128)
    for i in range(11):
        band = bands[i % r]
        spectra[i, band] = torch.complex(torch.randn(len(band), generator=g, dtype=torch.float64),
                                         torch.randn(len(band), generator=g, dtype=torch.float64))
    z = torch.fft.irfft(spectra, n=d)
    decoded = defense.decode(defense.encode(z.view(11, 4, 4, 4)))
    torch.testing.assert_close(decoded.flatten(1), z)


def test_a_lone_sample_under_a_unitary_key_is_recovered_exactly():
    """A group holding one sample (``R = 1`` in effect: the rest is padding) and a key of unit
    spectral modulus: unbinding inverts binding for any input."""
    defense = c3sl(2, cut=(9,)).double()
    defense.normalise = False
    spectrum = torch.polar(torch.ones(5, dtype=torch.float64), torch.rand(5, dtype=torch.float64) * 6.28)
    spectrum[0] = 1.0
    defense.keys = torch.stack([torch.fft.irfft(spectrum, n=9), defense.keys[1]])
    z = torch.randn(1, 9, dtype=torch.float64)
    torch.testing.assert_close(defense.decode(defense.encode(z)), z)


def test_random_keys_leave_the_expected_crosstalk():
    """With the released keys and i.i.d. N(0, 1) inputs, ``E‖ẑ_i − z_i‖² = d Σ_j ‖k_s ⋆ k_j − δ_sj δ‖²``
    over the group's slots ``j`` (exact in expectation over z, given the keys); at large ``d`` each
    term is about 1, so the error is about ``R·d``: the signal-to-crosstalk ratio is ``1/R``."""
    r, d, n = 4, 4096, 64
    defense = c3sl(r, cut=(d,)).double()
    defense.normalise = False
    z = torch.randn(n, d, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    error = (defense.decode(defense.encode(z)) - z).pow(2).sum(1)
    k = torch.fft.fft(defense.keys)
    # ‖k_s ⋆ k_j‖² by Parseval; the self term loses its peak, ‖k_s‖² = 1
    cross = (k.abs().pow(2)[:, None, :] * k.abs().pow(2)[None, :, :]).sum(-1) / d
    cross = cross - torch.eye(r, dtype=torch.float64) * (2 * defense.keys.pow(2).sum(1) - 1)
    predicted = d * cross.sum(1)  # per slot
    observed = error.view(-1, r).mean(0)
    torch.testing.assert_close(observed / predicted, torch.ones(r, dtype=torch.float64), atol=0.05, rtol=0)
    assert abs(float(predicted.mean()) / (r * d) - 1) < 0.1


@pytest.mark.parametrize("r", [2, 4, 8, 16])
def test_bytes_per_sample_are_one_rth_of_raw(r):
    defense = c3sl(r)
    described = defense.describe()
    assert described["realized_cr"] == pytest.approx(r)
    assert described["payload_bytes"] == pytest.approx(4 * D / r)
    assert described["payload_values"] == pytest.approx(D / r)
    batch = 64  # what the engine's channel counts: wire tensors over the batch's samples
    assert nbytes(wire_tensors(defense.encode(torch.randn(batch, *CUT)))) / batch == pytest.approx(4 * D / r)
    with_dp = build_defense("c3sl+dp", cut_shape=CUT, seed=0, cr=r, sigma=0.02)
    assert with_dp.describe()["realized_cr"] == pytest.approx(r)


def test_a_batch_that_r_does_not_divide_is_padded_and_decodes_to_exactly_b_maps():
    defense = c3sl(8)
    z = torch.randn(13, *CUT)
    payload = defense.encode(z)
    assert payload.rows.shape == (2, D) and samples_of(payload) == 13
    assert defense.decode(payload).shape == (13, *CUT)
    # the padding is zero activations: the same rows as explicit zero samples give
    explicit = defense.encode(torch.cat([z, torch.zeros(3, *CUT)]))
    torch.testing.assert_close(payload.rows, explicit.rows)
    torch.testing.assert_close(defense.decode(payload), defense.decode(explicit)[:13])


def test_cr_must_be_an_integer_of_at_least_two():
    for cr in (None, 1, 2.5):
        with pytest.raises(DefenseConfigError, match="c3sl") as err:
            c3sl(cr)
        assert "\n" not in str(err.value)


def test_keys_are_the_released_ones_seeded_and_public():
    defense = c3sl(4)
    assert defense.keys.shape == (4, D)
    torch.testing.assert_close(defense.keys.norm(dim=1), torch.ones(4))
    assert torch.equal(defense.keys, c3sl(4).keys) and not torch.equal(defense.keys, c3sl(4, seed=1).keys)
    assert torch.equal(defense.public_state()["keys"], defense.keys)
    assert torch.equal(defense.server_half().keys, defense.keys)
    assert defense.client_parameters() == [] and defense.server_parameters() == []


def test_a_vector_cut_is_normalised_as_the_released_linear_split():
    z = 3 + 2 * torch.randn(6, 256)
    flat = normalise_for_binding(z)
    torch.testing.assert_close(flat.mean(1), torch.zeros(6), atol=1e-6, rtol=0)
    torch.testing.assert_close(flat.pow(2).sum(1), torch.full((6,), 255 / 256))
    plain = c3sl(2, cut=(256,))
    plain.normalise = False
    torch.testing.assert_close(c3sl(2, cut=(256,)).encode(z).rows, plain.encode(flat).rows)
    assert not c3sl(2).normalise  # a conv map is bound as it is (the released conv splits)
    assert torch.isfinite(normalise_for_binding(torch.zeros(2, 256))).all()


def test_take_and_concat_index_samples_and_keep_their_rows_whole():
    defense = c3sl(4)
    z = torch.randn(10, *CUT)
    payload = defense.encode(z)
    full = defense.decode(payload)
    index = torch.tensor([9, 0, 5, 6])
    part = take(payload, index)
    assert samples_of(part) == 4 and len(part.rows) == 3  # rows 2, 0 and 1, whole
    torch.testing.assert_close(defense.decode(part), full[index])
    torch.testing.assert_close(defense.decode(take(payload, slice(3, 7))), full[3:7])
    skipping = take(payload, torch.tensor([9, 1]))  # rows 2 and 0: row 1 is not kept
    assert len(skipping.rows) == 2
    torch.testing.assert_close(defense.decode(skipping), full[[9, 1]])
    joined = concat([take(payload, slice(0, 6)), defense.encode(z[:5])])
    torch.testing.assert_close(defense.decode(joined), torch.cat([full[:6], defense.decode(defense.encode(z[:5]))]))


def test_the_gradient_crosses_back_through_the_same_operations():
    """The engine's path (server leaf, row gradient sent back, client backward) equals autograd
    through decode∘encode; the gradient on the wire has one row per group."""
    defense = c3sl(4)
    z = torch.randn(6, *CUT, requires_grad=True)
    weights = torch.randn(6, *CUT)
    payload = defense.encode(z)
    received = cross_to_server(payload)
    (defense.decode(received) * weights).sum().backward()
    assert received.rows.grad.shape == (2, D)
    payload.rows.backward(received.rows.grad)
    direct = torch.autograd.grad((defense.decode(defense.encode(z)) * weights).sum(), z)[0]
    torch.testing.assert_close(z.grad, direct)


def test_observed_gradients_sum_a_row_over_all_its_samples_whatever_the_chunks(digits):
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="c3sl", defense_knobs={"cr": 4.0},
                profile="smoke", seed=0)
    torch.manual_seed(0)
    model = build_model(cell, digits)
    x, y = digits.members.x[:10], digits.members.y[:10]
    with torch.no_grad():
        payload = model.defense.encode(model.heads[0].eval()(x))
    whole = observe_gradients(model, payload, y, batch_size=len(y))
    chunked = observe_gradients(model, payload, y, batch_size=3)  # chunks split groups
    torch.testing.assert_close(chunked, whole)
    assert whole.shape == (10, D)
    assert torch.equal(whole[0], whole[3]) and not torch.equal(whole[3], whole[4])  # one gradient per row


def test_a_grouped_sample_is_read_through_the_servers_unbinding():
    """Attacks that read payloads sample by sample see a C3-SL sample as the server does (its
    unbinding), not as the whole row it shares; a per-sample payload is read as it is."""
    defense = c3sl(4)
    z = torch.randn(6, *CUT)
    payload = defense.encode(z)
    torch.testing.assert_close(sample_vectors(defense, payload), defense.decode(payload).flatten(1))
    raw = build_defense("raw", cut_shape=CUT, seed=0)
    assert torch.equal(sample_vectors(raw, raw.encode(z)), z.flatten(1))
