"""The linear probe: closed-form ridge regression from the payload to the input."""
from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import torch

from attacks.base import ATTACKS, AttackOutput, PassiveAttack
from attacks.view import Capability

# The ridge penalties the probe chooses among, on standardised payload values, by efficient
# leave-one-out error on the auxiliary pairs (scikit-learn's RidgeCV): a fixed grid, so no profile
# or budget moves it.
RIDGE_ALPHAS = tuple(10.0**k for k in range(-3, 6))


@ATTACKS.register("linear-probe")
class LinearProbe(PassiveAttack):
    """Fits a ridge regression from each auxiliary sample's payload (a dense vector:
    :meth:`~attacks.view.AttackerView.sample_vectors`, the payload itself except C3-SL's grouped rows,
    read through their public unbinding) to its image, standardising the payload values and choosing
    the penalty from :data:`RIDGE_ALPHAS` by leave-one-out error; the targets' payloads then go
    through it and the reconstructions are clipped to [0, 1].

    What it measures: the linear part of the leakage, with no network to train and nothing to
    converge. Where the payload is an invertible linear map of the input, it recovers the input
    exactly; a defense that leaves only nonlinear structure beats it. Its input width is the
    payload's, so it is the one attack whose size follows the defense (a closed form has no
    architecture to hold fixed).

    Budget: a closed form runs no iterations, so ``budget`` is accepted and changes nothing (as for
    the ``prior`` floor, ``configs`` is empty): cells at ×4 its budget repeat ×1 to the digit, and
    the convergence rule (:mod:`bench.report.convergence`) reads it as converged where both are stored.

    Paper: the estimator is Hoerl and Kennard's ridge regression ("Ridge regression: biased estimation
    for nonorthogonal problems", Technometrics 1970), its penalty chosen by leave-one-out error as in
    scikit-learn's ``RidgeCV``; the attack-free baseline of issue 42 (item 3).
    Threat model: honest-but-curious server with same-distribution auxiliary images and black-box
    queries of the trained client path (``aux_queries``), as the auxiliary decoder.
    """

    requires = frozenset({Capability.AUX_QUERIES})
    kinds = ("image",)
    headline_metric = "ssim"
    configs: ClassVar[Mapping[str, object]] = {}  # a closed form: nothing to size, train or scale

    def run(self) -> AttackOutput:
        from sklearn.linear_model import RidgeCV  # imported here: scikit-learn is slow to import
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        view, aux = self.view, self.view.aux
        features = view.sample_vectors(aux.payloads).double().cpu().numpy()
        images = aux.inputs.flatten(1).double().cpu().numpy()
        probe = make_pipeline(StandardScaler(), RidgeCV(alphas=RIDGE_ALPHAS)).fit(features, images)
        predicted = probe.predict(view.sample_vectors(view.targets.payloads).double().cpu().numpy())
        recon = torch.from_numpy(predicted).float().view(-1, *view.input_shape).clamp(0, 1)
        return AttackOutput(reconstructions=recon.to(aux.inputs.device),
                            scores={"linear_probe_alpha": float(probe[-1].alpha_)})
