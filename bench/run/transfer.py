"""Did an attack's substitute client learn the victim's? A ridge regression from its cut maps to the victim's.

An attack that trains a stand-in for the client's head (FORA's substitute) names it in
:attr:`attacks.base.Attack.substitute_network`. Whether that stand-in computes what the victim's head
computes decides whether a decoder trained on it can invert the victim's payloads, yet the attack
cannot check it: the victim's maps of the attacker's own images are ground truth the server never
holds. The bench, which holds the victim, scores it here after the attack has run:

* inputs: the aux images (the attacker's, from the targets' distribution), seeded split into a fit
  half and a score half of at most :data:`FIT_SIZE` each;
* targets: the victim client's head output (the cut map before any defense), flattened;
* regressors: the substitute's maps of the same images (evaluation mode), flattened, and as the
  baseline the raw pixels;
* model: ridge regression with an intercept on centred regressors scaled by one number (:func:`_scale`),
  its ``alpha`` chosen among
  :data:`ALPHAS` by leave-one-out error over all targets on the fit half (scikit-learn's
  ``RidgeCV``, generalised cross-validation, one alpha for all targets), solved in kernel form
  (a 16,384 × 16,384 coefficient matrix at FORA's released cut is never formed; same predictions
  as ``Ridge(alpha)``, ``tests/bench/run/test_transfer.py``);
* score: R² on the score half, variance-weighted over the map's elements (1 − residual / total sum
  of squares; constant elements do not dominate, as they would in a uniform average).

A substitute whose R² is no higher than the pixels' has learnt nothing about the victim's features
that a linear map of the image does not hold: the row carries ``substitute_transferred`` 0 and a
note saying so.
"""
from __future__ import annotations

import torch
from torch import Tensor, nn

from bench.profiles import INFERENCE_BATCH_SIZE
from bench.run.device import seeded_permutation

FIT_SIZE = 1000  # images per half (fit, score) at most
ALPHAS = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)  # relative to the kernel's mean diagonal, 1 after _scale
SPLIT_SEED = 39
NOTES = {
    "transfer_r2": "R² of a ridge regression from the attack's substitute maps to the victim head's maps "
                   "(held-out aux images; bench.run.transfer)",
    "transfer_r2_pixels": "the same regression from the raw pixels: the baseline the substitute must beat",
    "substitute_transferred": "1 when transfer_r2 exceeds transfer_r2_pixels, else 0",
}


@torch.no_grad()
def _maps(module: nn.Module, x: Tensor) -> Tensor:
    was_training = module.training
    module.eval()
    device = next(module.parameters(), x).device
    try:
        out = [module(part.to(device)).flatten(1).double().cpu() for part in x.split(INFERENCE_BATCH_SIZE)]
    finally:
        module.train(was_training)
    return torch.cat(out)


def _scale(fit: Tensor, score: Tensor) -> tuple[Tensor, Tensor]:
    """Both halves centred on the fit half's mean and divided by one number, the fit half's root mean
    squared row norm (the kernel's mean diagonal becomes 1, so one alpha grid serves maps and pixels).

    Not z-scored per column: a channel nearly dead on the fit half would be blown up, and its rare
    activations on the score half with it (the substitute's maps at SimpleCNN's L2H scored R² −7.9
    so, against 0.275 for the pixels)."""
    mean = fit.mean(0)
    norm = (fit - mean).pow(2).sum(1).mean().sqrt().clamp_min(1e-12)
    return (fit - mean) / norm, (score - mean) / norm


def ridge_r2(x_fit: Tensor, y_fit: Tensor, x_score: Tensor, y_score: Tensor, alphas: tuple[float, ...] = ALPHAS) -> float:
    """R² (variance-weighted) on the score half of a ridge regression fit on the fit half.

    ``alpha`` is the one of ``alphas`` with the least leave-one-out squared error summed over every
    target on the fit half (the intercept's centring held fixed), computed from one eigendecomposition
    of the fit kernel.

    Raises:
        ValueError: fewer than 2 fit samples or mismatched lengths.
    """
    if len(x_fit) < 2 or len(x_fit) != len(y_fit) or len(x_score) != len(y_score):
        raise ValueError(f"ridge_r2: need >= 2 fit samples and matching lengths, got {len(x_fit)}, {len(y_fit)}, "
                         f"{len(x_score)}, {len(y_score)}")
    x_fit, x_score = _scale(x_fit.double(), x_score.double())
    y_mean = y_fit.double().mean(0)
    y_centred = y_fit.double() - y_mean
    eigenvalues, vectors = torch.linalg.eigh(x_fit @ x_fit.T)
    eigenvalues = eigenvalues.clamp_min(0.0)
    projected = vectors.T @ y_centred
    best, best_dual = float("inf"), None
    for alpha in alphas:
        inverse = 1.0 / (eigenvalues + alpha)
        dual = vectors @ (inverse[:, None] * projected)  # (K + αI)⁻¹ y
        diagonal = (vectors.pow(2) * inverse).sum(1)  # diag of (K + αI)⁻¹
        loo = (dual / diagonal[:, None]).pow(2).sum().item()
        if loo < best:
            best, best_dual = loo, dual
    prediction = (x_score @ x_fit.T) @ best_dual + y_mean
    y_score = y_score.double()
    total = (y_score - y_score.mean(0)).pow(2).sum()
    return float(1.0 - (y_score - prediction).pow(2).sum() / total) if total > 0 else float("nan")


def substitute_transfer(
    substitute: nn.Module, victim_head: nn.Module, aux: Tensor, *, fit_size: int = FIT_SIZE
) -> tuple[dict[str, float | None], dict[str, str]]:
    """``transfer_r2``, ``transfer_r2_pixels`` and ``substitute_transferred`` of one cell, with notes.

    Args:
        substitute: the attack's stand-in for the client head (images → cut-shaped maps).
        victim_head: the victim client's trained head (the cut map before any defense).
        aux: the attacker's aux images; a seeded half fits the regressions, the other half scores them.
        fit_size: images per half at most.

    Both modules are run in evaluation mode and left in the mode they were in.
    """
    n = min(len(aux) // 2, fit_size)
    if n < 2:
        return {k: None for k in NOTES}, {"transfer_r2": f"too few aux images ({len(aux)}) to fit and score"}
    order = seeded_permutation(len(aux), torch.Generator().manual_seed(SPLIT_SEED), device=aux.device)
    fit, score = aux[order[:n]], aux[order[n : 2 * n]]
    victim_fit, victim_score = _maps(victim_head, fit), _maps(victim_head, score)
    substitute_r2 = ridge_r2(_maps(substitute, fit), victim_fit, _maps(substitute, score), victim_score)
    pixels_r2 = ridge_r2(fit.flatten(1).double().cpu(), victim_fit, score.flatten(1).double().cpu(), victim_score)
    transferred = substitute_r2 > pixels_r2
    notes = dict(NOTES)
    if not transferred:
        notes["substitute_transferred"] = (
            f"substitute did not transfer: R² {substitute_r2:.3f} from its maps, no better than {pixels_r2:.3f} from pixels"
        )
    return {"transfer_r2": substitute_r2, "transfer_r2_pixels": pixels_r2,
            "substitute_transferred": float(transferred)}, notes
