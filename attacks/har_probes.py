"""The two UCI HAR probes on the cut payload: feature reconstruction and subject re-identification.

Both read only the payload, so they apply to any defense (dense or sparse payloads alike, C3-SL's
grouped rows through each sample's unbinding: :meth:`~attacks.view.AttackerView.sample_vectors`).
Neither sees the targets' inputs: the decoder learns from non-members, the subject classifier from
members the white-box view hands over, and the checkpoint or classifier is never chosen on the data
it is scored on.

Paper: LightSplit (arXiv:2605.13265), App. B-C4 (UCI HAR probes).
"""
from __future__ import annotations

import copy
import math
import warnings
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from attacks.base import ATTACKS, AttackOutput, MissingCapabilityError, PassiveAttack, scale_counts
from attacks.view import AttackerView, Capability
from bench.run.device import forked_rng, seeded_permutation


@dataclass(frozen=True)
class ProbeConfig:
    """What one profile lets the HAR probes spend: their epochs and hyper-parameters.

    Attributes:
        epochs: decoder training epochs, 1..10,000.
        batch_size: decoder mini-batch size, ≥ 1.
        lr: decoder Adam learning rate, in (0, 1].
        holdout: fraction of the non-member pairs held out to select the decoder's epoch, in (0, 0.5].
        reid_max_iter: L-BFGS iteration cap of the subject classifier, 10..100,000.
    """

    epochs: int
    batch_size: int = 64
    lr: float = 1e-3
    holdout: float = 0.1
    reid_max_iter: int = 2000

    def __post_init__(self) -> None:
        if not 1 <= self.epochs <= 10_000:
            raise ValueError(f"epochs must lie in 1..10000, got {self.epochs}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if not 0 < self.lr <= 1:
            raise ValueError(f"lr must lie in (0, 1], got {self.lr}")
        if not 0 < self.holdout <= 0.5:
            raise ValueError(f"holdout must lie in (0, 0.5], got {self.holdout}")
        if not 10 <= self.reid_max_iter <= 100_000:
            raise ValueError(f"reid_max_iter must lie in 10..100000, got {self.reid_max_iter}")


CONFIGS: dict[str, ProbeConfig] = {
    "smoke": ProbeConfig(epochs=15),  # seconds on a few hundred samples
    "cpu": ProbeConfig(epochs=40),  # well under a minute on 2,000 non-members, 2 cores
    "paper": ProbeConfig(epochs=100),
}


def probe_config(profile: str) -> ProbeConfig:
    """The probes' configuration for ``profile``.

    Raises:
        KeyError: for a profile without one.
    """
    try:
        return CONFIGS[profile]
    except KeyError:
        raise KeyError(f"no HAR probe configuration for profile '{profile}' (known: {', '.join(CONFIGS)})") from None


def _standardiser(x: Tensor) -> tuple[Tensor, Tensor]:
    """Column mean and std of ``x``; constant columns get std 1 so they map to 0, not to NaN."""
    mean, std = x.mean(0), x.std(0)
    return mean, torch.where(std > 1e-8, std, torch.ones_like(std))


def _decoder(k: int, features: int) -> nn.Sequential:
    # Linear output: the targets are standardised features, unbounded in either direction.
    return nn.Sequential(nn.Linear(k, 256), nn.ReLU(), nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, features))


def _median_r2(pred: Tensor, truth: Tensor) -> float:
    sse = ((truth - pred) ** 2).sum(0)
    sst = ((truth - truth.mean(0)) ** 2).sum(0)
    keep = sst > 0
    return float((1 - sse[keep] / sst[keep]).median()) if bool(keep.any()) else float("nan")


@ATTACKS.register("har-recon")
class HarReconstruction(PassiveAttack):
    """Reconstruct the targets' 561 features from their payloads with a decoder trained on non-members.

    The decoder is an MLP payload(k) → 256 → 512 → 561 (ReLU between, linear output) trained with MSE
    and Adam on the non-members' (payload, x) pairs. Features and payloads are standardised with the
    non-members' mean and std; a seeded ``holdout`` slice of those pairs picks the best epoch, so the
    targets never drive selection. Reconstructions come back in the original feature units, for
    bench to score with the median per-feature R² (the non-member mean predictor scores about 0).

    Paper: LightSplit (arXiv:2605.13265), App. B-C4. The paper selects the checkpoint on a held-out
    member slice; here a non-member slice does, because this threat model grants no member inputs.
    Threat model: passive honest-but-curious server holding non-member data and its payloads through
    the trained client path (``AUX_QUERIES``), and the targets' payloads.

    Diverged: a non-finite training loss stops training at the end of its epoch; the best finite epoch is used and
    ``diverged`` is set.

    Args:
        view: what the server holds; ``view.aux`` must carry payloads and inputs.
        profile: the profile whose configuration applies (see :data:`CONFIGS`).
        budget: multiplier on the training epochs (and the re-identification probe's iteration cap).
        seed: seeds the decoder's initialisation, the holdout slice and the batch order.

    Raises:
        MissingCapabilityError: without ``AUX_QUERIES``, or on non-tabular data.
        ValueError: with fewer than two non-member pairs.
    """

    requires = frozenset({Capability.AUX_QUERIES})
    kinds = ("tabular",)
    headline_metric = "median_r2"
    configs = CONFIGS

    def __init__(self, *, view: AttackerView, profile: str, seed: int = 0, budget: float = 1.0) -> None:
        super().__init__(view=view, profile=profile, seed=seed, budget=budget)
        self.config = scale_counts(probe_config(profile), self.budget, "epochs", "reid_max_iter")
        aux = view.aux
        if aux is None or aux.payloads is None or aux.inputs is None:
            raise MissingCapabilityError("HarReconstruction needs the non-members' payloads and inputs in view.aux")
        if len(aux.inputs) < 2:
            raise ValueError(f"HarReconstruction needs at least 2 non-member pairs, got {len(aux.inputs)}")

    def run(self) -> AttackOutput:
        config, aux = self.config, self.view.aux
        p = self.view.sample_vectors(aux.payloads).detach().float()
        x = aux.inputs.detach().float().flatten(1)
        p_mean, p_std = _standardiser(p)
        x_mean, x_std = _standardiser(x)
        p, x = (p - p_mean) / p_std, (x - x_mean) / x_std

        generator = torch.Generator().manual_seed(self.seed)
        order = seeded_permutation(len(x), generator, device=x.device)
        n_hold = max(1, round(config.holdout * len(x)))
        hold, fit = order[:n_hold], order[n_hold:]
        with forked_rng():
            torch.manual_seed(self.seed)
            decoder = _decoder(p.shape[1], x.shape[1])
        optimiser = torch.optim.Adam(decoder.parameters(), lr=config.lr)

        best = (math.inf, 0, copy.deepcopy(decoder.state_dict()))
        diverged = False
        for epoch in range(1, config.epochs + 1):
            decoder.train()
            finite = torch.ones((), dtype=torch.bool)
            for batch in seeded_permutation(len(fit), generator, device=fit.device).split(config.batch_size):
                idx = fit[batch]
                loss = nn.functional.mse_loss(decoder(p[idx]), x[idx])
                finite = finite & torch.isfinite(loss)
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
            if not bool(finite):  # read once an epoch: the steps after a non-finite loss change nothing kept
                diverged = True
                break
            decoder.eval()
            with torch.no_grad():
                hold_mse = float(nn.functional.mse_loss(decoder(p[hold]), x[hold]))
            if hold_mse < best[0]:
                best = (hold_mse, epoch, copy.deepcopy(decoder.state_dict()))

        decoder.load_state_dict(best[2])
        decoder.eval()
        with torch.no_grad():
            targets = (self.view.sample_vectors(self.view.targets.payloads).detach().float() - p_mean) / p_std
            reconstructions = decoder(targets) * x_std + x_mean
            hold_r2 = _median_r2(decoder(p[hold]), x[hold]) if n_hold > 1 else float("nan")
        return AttackOutput(
            reconstructions=reconstructions.view(len(targets), *self.view.input_shape),
            scores={
                "recon_holdout_mse": best[0] if math.isfinite(best[0]) else None,
                "recon_holdout_median_r2": hold_r2 if math.isfinite(hold_r2) else None,
                "recon_best_epoch": float(best[1]),
            },
            notes={"recon_holdout_mse": "standardised units on the non-member holdout; the mean predictor scores ~1"},
            diverged=diverged,
        )


def block_split(groups: Tensor, *, train_fraction: float = 0.7, gap: int = 1) -> tuple[Tensor, Tensor]:
    """Split each group's samples, in their stored order, into a leading train and a trailing test block.

    Per group of ``n`` samples, the first ``round(train_fraction · n)`` train, the next ``gap`` are
    dropped (50 %-overlapping HAR windows would otherwise leak across the boundary) and the rest test.

    Returns:
        Sorted train and test indices (LongTensors).
    """
    train, test = [], []
    for group in groups.unique().tolist():
        idx = (groups == group).nonzero().view(-1)
        cut = round(train_fraction * len(idx))
        train.append(idx[:cut])
        test.append(idx[cut + gap :])
    return torch.cat(train).sort().values, torch.cat(test).sort().values


@ATTACKS.register("har-reid")
class HarReidentification(PassiveAttack):
    """Re-identify the subject behind a payload with a classifier trained on other members' payloads.

    Members' windows are split per subject into contiguous blocks (:func:`block_split`: first 70 %
    train, one window dropped, the rest test). The classifier is a standardised-payload multinomial
    logistic regression (sklearn, L-BFGS, C = 1): a linear probe measures what the payload exposes
    without the probe's own capacity doing the work, has no epochs or checkpoint to select (so the
    test block never drives a choice), and is deterministic. Accuracy is read against chance,
    1 / (number of subjects in the test part).

    The blocks follow the order of ``view.members``; they are contiguous in time only when that is
    the members' stored (file) order.

    Paper: LightSplit (arXiv:2605.13265), App. B-C4.
    Threat model: passive server given other members' payloads with their subject ids
    (``MEMBER_INPUTS``, the white-box ceiling).

    Args:
        view: what the server holds; ``view.members`` must carry payloads and groups (subject ids).
        profile: the profile whose configuration applies (see :data:`CONFIGS`).
        budget: multiplier on the training epochs (and the re-identification probe's iteration cap).
        seed: the classifier's ``random_state``.

    Raises:
        MissingCapabilityError: without ``MEMBER_INPUTS``, on non-tabular data, or without subject ids.
    """

    requires = frozenset({Capability.MEMBER_INPUTS})
    kinds = ("tabular",)
    headline_metric = "reid_accuracy"
    configs = CONFIGS

    def __init__(self, *, view: AttackerView, profile: str, seed: int = 0, budget: float = 1.0) -> None:
        super().__init__(view=view, profile=profile, seed=seed, budget=budget)
        self.config = scale_counts(probe_config(profile), self.budget, "epochs", "reid_max_iter")
        members = view.members
        if members is None or members.payloads is None or members.groups is None:
            raise MissingCapabilityError(
                "HarReidentification needs the members' payloads and subject ids in view.members"
            )

    def run(self) -> AttackOutput:
        members = self.view.members
        z = self.view.sample_vectors(members.payloads).detach().float().cpu().numpy()
        subjects = members.groups.cpu()
        train, test = block_split(subjects)
        test_subjects = subjects[test].unique()
        scores: dict[str, float | None] = {"reid_subjects": float(len(test_subjects))}
        if len(test) == 0 or len(subjects[train].unique()) < 2:
            scores.update(reid_accuracy=None, reid_chance=None)
            note = "fewer than 2 subjects to train on, or no test block"
            return AttackOutput(scores=scores, notes={"reid_accuracy": note})

        # scikit-learn is imported here, not at module level: registering attacks should stay cheap.
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        classifier = make_pipeline(
            StandardScaler(), LogisticRegression(max_iter=self.config.reid_max_iter, random_state=self.seed)
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            classifier.fit(z[train.numpy()], subjects[train].numpy())
        converged = True
        for w in caught:
            if issubclass(w.category, ConvergenceWarning):
                converged = False
            else:
                warnings.warn(w.message, w.category, stacklevel=2)
        predicted = classifier.predict(z[test.numpy()])
        scores.update(
            reid_accuracy=float(np.mean(predicted == subjects[test].numpy())),
            reid_chance=1.0 / len(test_subjects),
        )
        notes = {}
        if not converged:
            notes["reid_accuracy"] = f"logistic regression hit max_iter={self.config.reid_max_iter} before converging"
        return AttackOutput(scores=scores, notes=notes)
