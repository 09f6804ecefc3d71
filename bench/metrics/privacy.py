"""Formal (ε, δ) of DP at the cut, from Opacus's RDP accountant.

The DP defense clips every sample's payload to L2 norm ``C`` and adds N(0, (σC)²) to each
coordinate (:mod:`defenses.dp`). For one sample, one release is a Gaussian mechanism: two inputs can
move the clipped payload by at most ``2C`` (replace-one adjacency), so its noise multiplier relative
to the sensitivity is ``σ / 2``. A client's sample is released once per training epoch, always (no
subsampling, so no amplification: sampling rate 1), so training composes ``epochs`` releases; the
evaluation pass adds one more. The clip is the (data-dependent) batch median, treated here as public,
as the paper does — the guarantee is therefore optimistic, never conservative.
"""
from __future__ import annotations

import warnings

DEFAULT_DELTA = 1e-5
ACCOUNTANT = "Opacus RDP accountant (replace-one adjacency, sampling rate 1)"  # what gaussian_release_epsilon uses


def gaussian_release_epsilon(*, sigma: float, releases: int, delta: float = DEFAULT_DELTA) -> float:
    """ε after ``releases`` Gaussian releases of one sample's payload at noise multiplier ``sigma``.

    Returns ``inf`` for ``sigma == 0``.
    """
    if sigma < 0 or releases < 1 or not 0 < delta < 1:
        raise ValueError("need sigma >= 0, releases >= 1 and 0 < delta < 1")
    if sigma == 0:
        return float("inf")
    from opacus.accountants import RDPAccountant  # imported here: only DP cells need it

    accountant = RDPAccountant()
    accountant.history = [(sigma / 2.0, 1.0, releases)]
    with warnings.catch_warnings():  # Opacus warns that its default orders may be too few: they are
        warnings.simplefilter("ignore")
        return float(accountant.get_epsilon(delta=delta))


def dp_metrics(*, sigma: float, epochs: int, delta: float = DEFAULT_DELTA) -> dict[str, float]:
    """The ε of one release and of the whole run (training epochs + one evaluation release)."""
    return {
        "dp_delta": delta,
        "dp_epsilon_per_release": gaussian_release_epsilon(sigma=sigma, releases=1, delta=delta),
        "dp_epsilon_total": gaussian_release_epsilon(sigma=sigma, releases=epochs + 1, delta=delta),
    }
