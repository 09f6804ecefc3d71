"""FSHA: feature-space hijacking by a malicious server (Pasquini et al., CCS 2021)."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attacks.base import ATTACKS, ActiveAttack, AttackOutput, config_for, scale_counts
from attacks.budget_table import MeasuredBudget
from attacks.fsha_config import CONFIGS, FSHAConfig
from attacks.fsha_nets import Critic, Decoder, Pilot, gradient_penalty
from attacks.view import AttackerView, Capability, StepView
from bench.profiles import INFERENCE_BATCH_SIZE
from bench.run.device import DeviceLog, forked_rng, seeded_permutation
from defenses.payload import Payload, detach, samples_of, take, values_of, with_values

# Keys of one history record (one FSHA iteration).
AE_MSE, CRITIC_LOSS, WASSERSTEIN, GP, SCALE = "ae_mse", "critic_loss", "wasserstein", "gp", "scale"
RECORD_KEYS = (AE_MSE, CRITIC_LOSS, WASSERSTEIN, GP, SCALE)


def _window_mean(history: Sequence[Mapping[str, float]], key: str, part: slice) -> float:
    values = [record[key] for record in history[part]]
    return sum(values) / len(values)


def fsha_diverged(
    history: Sequence[Mapping[str, float]], *, window: float = 0.1, max_relative_wasserstein: float = 1.0
) -> bool:
    """Whether an FSHA run collapsed, from its per-iteration records.

    Each record holds ``ae_mse``, ``critic_loss``, ``wasserstein`` (the critic's estimate
    ``mean D(client) − mean D(pilot)``), ``gp`` and ``scale`` (``mean‖z_client‖ + mean‖z_pilot‖``
    of that batch). The run diverged when

    1. any recorded value is non-finite; or
    2. the Wasserstein estimate exploded: over the last window its mean exceeds
       ``max_relative_wasserstein × scale``. A 1-Lipschitz critic cannot separate two batches by
       more than ``mean‖z_client‖ + mean‖z_pilot‖``, so an estimate above that bound means the
       gradient penalty lost control of the critic; or
    3. the autoencoder did not learn: its mean MSE over the last window is not below the first
       window's (checked only with at least two records, so the windows are distinct).

    Windows are the first and last ``ceil(window × len(history))`` records (at least one). An empty
    history (no iteration ran) has not diverged.

    Args:
        history: one record per iteration, in order (:attr:`FSHA.history`).
        window: fraction of the records in each window, in (0, 0.5].
        max_relative_wasserstein: the explosion threshold, in units of ``scale``.

    Returns:
        ``True`` when any of the three criteria holds.

    Raises:
        ValueError: for a window outside (0, 0.5].
    """
    if not 0 < window <= 0.5:
        raise ValueError(f"window must lie in (0, 0.5], got {window}")
    if not history:
        return False
    if any(not math.isfinite(float(v)) for record in history for v in record.values()):
        return True
    n = max(1, math.ceil(window * len(history)))
    last = slice(len(history) - n, None)
    if _window_mean(history, WASSERSTEIN, last) > max_relative_wasserstein * _window_mean(history, SCALE, last):
        return True
    return len(history) >= 2 and _window_mean(history, AE_MSE, last) >= _window_mean(history, AE_MSE, slice(0, n))


@ATTACKS.register("fsha")
class FSHA(ActiveAttack):
    """Feature-space hijacking: the server returns the gradient of its critic instead of the task's.

    The attacker reads everything as cut maps ``(B, *cut_shape)`` (:meth:`Defense.cut_map`: raw z,
    ``R z̃`` for LightSplit-F and -L, the dense top-K map, the server 1×1 output; under DP the noisy
    payload mapped alike), so its decoder and critic depend on the cut's shape only: the same
    networks (:meth:`networks`) face every defense of a cut. Every step of the hijacked run,
    :meth:`client_gradient` receives the client's payload ``p`` and returns
    ``∂ mean(D(cut_map(p))) / ∂p``, with respect to the payload's values (the client's encoder thus
    minimises its critic score, i.e. moves its cut maps towards the pilot's); the honest gradient
    ``view.grad`` is discarded. In the same call the attacker runs one FSHA iteration on an aux batch
    of the client's batch size, drawn with its own generator: the autoencoder step
    ``MSE(f̃⁻¹(f̃(x)), x)`` and the critic step ``mean D(f̃(x)) − mean D(cut_map(p)) + λ·GP`` (both
    from the same forward, with the critic as it was before the step, as in the release's single
    tape). The pilot f̃ ends in the attacker's copy of the defense (``view.defense_factory()``: DP
    noise included, the trained server half frozen, a fresh client half that trains with f̃), run
    as an attacker simulates it (:meth:`Defense.attacker_encode`: straight-through top-K), then in
    its cut map. :meth:`run` decodes the trained view's target payloads through the same copy,
    ``x̂ = f̃⁻¹(cut_map(p))``, mapped from [-1, 1] to [0, 1] and clamped.

    The client's head gets no task gradient (the release's utility collapse). The benchmark's
    engine still trains the server's backbone and the client's tail honestly on the hijacked
    features, whereas the release's server trains no task at all; the cell's ``accuracy`` then
    shows how much utility the hijack costs when the rest of the model adapts.

    Deviations from the release (pasquini-dario/SplitNN_FSHA) and LightSplit App. B-C5:

    * Client optimiser: the victim's own Adam at lr 1e-4 (App. B-C5; release: 1e-5), which the
      hijacked run takes from :attr:`hijacked_client_lr`; Adam is invariant to the gradient's
      scale, so the server cannot slow it.
    * Learning rates at reduced scale (cpu, smoke): pilot+decoder 1e-4, critic 4e-4 (research notes
      §4.10 for a 1.5–3k-iteration budget); paper: 1e-4 for both, as App. B-C5. PyTorch Adam
      defaults (eps 1e-8; Keras: 1e-7).
    * Networks (:mod:`attacks.fsha_nets`): the reduced variant of §4.10 on 28×28×1 data — a
      two-conv linear pilot with a resize to the cut and an output ReLU; conv decoder with ReLU
      hidden layers (the notebooks' version; the current release is linear) and tanh on [-1, 1]
      images; critic downsampling first, ``critic_blocks`` residual blocks without BN (released: 6
      at the cut's resolution). All three read cut maps, for every defense (App. B-C5 pairs vector
      payloads with fully-connected networks instead).
    * Gradient penalty: full-flatten per-sample norm (PyTorch port), not the TF per-channel norm.
    * Length: whole victim epochs. cpu: 16 × 94 = 1,504 iterations; paper: 11 epochs ≈ 10,300
      iterations on MNIST's 60k training images, but ≈ 1,030 on the offline copy's 6,000 members
      (the epoch count cannot see the member count).

    Diverged: see :func:`fsha_diverged` (non-finite losses, an exploded Wasserstein estimate, or
    an autoencoder that did not learn); a non-finite reconstruction also counts.

    Paper: Pasquini, Ateniese, Bernaschi, "Unleashing the Tiger: Inference Attacks on Split
    Learning", CCS 2021 (arXiv:2012.02670); LightSplit App. B-C5 (FSHA at the cut, pilot through R).
    Threat model: active, malicious server that chooses the gradient the client receives; holds
    same-distribution auxiliary (public) images and the defense's public state (``R``, the DP
    clip) and its own server half, not the client architecture.

    Args:
        view: what the server holds (needs ``aux_data`` and ``defense_public_state``, and a
            ``(C, h, w)`` cut); targets may be empty until :meth:`update_view` hands over the
            trained run's view.
        profile: budget profile (``smoke``, ``cpu``, ``paper``), used unless ``config`` is given.
        seed: the attacker's seed (network initialisation, aux batches, GP interpolation).
        budget: multiplier on the hijacked run's epochs (one FSHA iteration per victim step).
        config: an explicit configuration, overriding the profile's.

    Raises:
        MissingCapabilityError: when the view lacks a required capability or is not image data.
        ValueError: for an unknown profile, a view with fewer than two aux images or a cut that is
            not a ``(C, h, w)`` map.
    """

    requires = frozenset({Capability.AUX_DATA, Capability.DEFENSE_PUBLIC_STATE})
    kinds = ("image",)
    headline_metric = "ssim"
    budget_table = (
        MeasuredBudget(profile="cpu", dataset="mnist", victim="mnistnet", cut="split-2", budget=1, verdict="unstable",
                       evidence="results/issue12-convergence: client lr 1e-3, x4 falls by 0.077 SSIM on raw and gains "
                                "+0.051 on LightSplit-F, seed 0: more budget does not reliably help"),
    )
    configs = CONFIGS

    def __init__(
        self, *, view: AttackerView, profile: str, seed: int = 0, budget: float = 1.0, config: FSHAConfig | None = None
    ) -> None:
        super().__init__(view=view, profile=profile, seed=seed, budget=budget)
        config = scale_counts(config_for("fsha", self.configs, profile, config), self.budget, "epochs")
        if view.aux is None or view.aux.inputs is None or len(view.aux.inputs) < 2:
            raise ValueError("fsha: the view holds fewer than two aux images")
        cut = tuple(view.cut_shape)
        if len(cut) != 3:
            raise ValueError(f"fsha: needs a (C, h, w) cut map, got cut shape {cut}")
        self.config = config
        self.aux = view.aux.inputs
        # Built in a forked RNG state: constructing the attack draws nothing from the victim's RNG.
        with forked_rng():
            torch.manual_seed(seed)
            self.defense = view.defense_factory()
            self.pilot = Pilot(view.input_shape, cut, config.pilot_width)
            self.decoder = Decoder(cut, view.input_shape, config.decoder_width)
            self.critic = Critic(cut, config.critic_width, config.critic_blocks)
        autoencoder = [*self.pilot.parameters(), *self.decoder.parameters(), *self.defense.client_parameters()]
        self.ae_optimizer = torch.optim.Adam(autoencoder, lr=config.lr_autoencoder)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=config.lr_critic)
        self.generator = torch.Generator().manual_seed(seed)
        self._records = DeviceLog()  # one row of RECORD_KEYS per iteration
        self._order = torch.empty(0, dtype=torch.long)

    def networks(self) -> dict[str, nn.Module]:
        """The pilot f̃ (without the defense it feeds), the decoder f̃⁻¹ and the critic D."""
        return {"pilot": self.pilot, "decoder": self.decoder, "critic": self.critic}

    @property
    def hijacked_epochs(self) -> int:
        """The hijacked run lasts the configuration's epochs (one FSHA iteration per victim step)."""
        return self.config.epochs

    @property
    def hijacked_client_lr(self) -> float:
        """The hijacked client's learning rate (App. B-C5: 1e-4), the configuration's ``client_lr``."""
        return self.config.client_lr

    def _aux_batch(self, n: int) -> Tensor:
        """``n`` aux images in [-1, 1]: shuffled passes over the aux set (with replacement if it is smaller)."""
        if n > len(self.aux):
            drawn = torch.randint(len(self.aux), (n,), generator=self.generator, device=self.generator.device)
            return self.aux[drawn.to(self.aux.device)] * 2 - 1
        if len(self._order) < n:
            self._order = seeded_permutation(len(self.aux), self.generator, device=self.aux.device)
        idx, self._order = self._order[:n], self._order[n:]
        return self.aux[idx] * 2 - 1

    def cut_map(self, payload: Payload) -> Tensor:
        """The cut map the attacker reads from a payload (its defense copy's :meth:`Defense.cut_map`),
        differentiable in the payload's values."""
        return self.defense.cut_map(payload)

    def pilot_map(self, x: Tensor) -> Tensor:
        """f̃(x) through the attacker's defense copy (straight-through, DP noise included), as a cut map."""
        return self.defense.cut_map(self.defense.attacker_encode(self.pilot(x)))

    def client_gradient(self, view: StepView) -> Tensor:
        """The hijacking gradient ``∂ mean(D(cut_map(p))) / ∂p`` (``p``: the payload's values) for the
        client, after one attacker iteration.

        Runs in a forked RNG state and with gradients enabled; draws only from the attack's generator
        and, for DP noise in the pilot's pass, the forked global RNG.
        """
        with forked_rng(), torch.enable_grad():
            values = values_of(view.payload).detach().clone().requires_grad_(True)
            z = self.cut_map(with_values(view.payload, values))
            for net in (self.pilot, self.decoder, self.critic, self.defense):
                net.train()
            d_client = self.critic(z)
            (grad,) = torch.autograd.grad(d_client.mean(), values, retain_graph=True)
            self._attacker_step(z, d_client)
        return grad.detach()

    def _attacker_step(self, z: Tensor, d_client: Tensor) -> None:
        """One autoencoder step and one critic step, from the critic as it was before this call."""
        x = self._aux_batch(len(z)).to(z.dtype)
        pilot_z = self.pilot_map(x)
        ae_mse = F.mse_loss(self.decoder(pilot_z), x)
        wasserstein = d_client.mean() - self.critic(pilot_z.detach()).mean()
        gp = gradient_penalty(self.critic, z, pilot_z, self.generator)
        critic_loss = -wasserstein + self.config.gp_weight * gp
        self.ae_optimizer.zero_grad(set_to_none=True)
        self.critic_optimizer.zero_grad(set_to_none=True)
        ae_mse.backward()
        critic_loss.backward(inputs=list(self.critic.parameters()))
        self.ae_optimizer.step()
        self.critic_optimizer.step()
        scale = z.detach().flatten(1).norm(dim=1).mean() + pilot_z.detach().flatten(1).norm(dim=1).mean()
        self._records.append(ae_mse, critic_loss, wasserstein, gp, scale)

    @property
    def history(self) -> list[dict[str, float]]:
        """One record per attacker iteration, in order."""
        return [dict(zip(RECORD_KEYS, row)) for row in self._records.rows()]

    @torch.no_grad()
    def run(self) -> AttackOutput:
        """Decode every target payload; scores summarise the last tenth of the attacker's training."""
        payloads = self.view.targets.payloads
        if payloads is None or len(self.view.targets) == 0:
            raise ValueError("fsha: the view holds no target payloads")
        self.decoder.eval()
        self.defense.eval()
        dtype, payloads = next(self.decoder.parameters()).dtype, detach(payloads)
        n, chunk = samples_of(payloads), INFERENCE_BATCH_SIZE
        batches = (take(payloads, slice(i, i + chunk)) for i in range(0, n, chunk))
        x_hat = torch.cat([self.decoder(self.cut_map(batch).to(dtype)) for batch in batches])
        finite = bool(torch.isfinite(x_hat).all())
        reconstructions = ((torch.nan_to_num(x_hat, nan=0.0) + 1) / 2).clamp(0.0, 1.0)
        scores: dict[str, float | None] = {"fsha_iterations": float(len(self.history))}
        notes = {
            "fsha_ae_mse": "pilot→decoder MSE on aux batches in [0, 1] units (¼ of the release's [-1, 1] value), "
            "mean over the last tenth of the iterations",
            "fsha_critic_loss": "mean D(pilot) − mean D(client) + λ·GP, mean over the last tenth",
            "fsha_wasserstein": "mean D(client) − mean D(pilot) before each critic step, mean over the last tenth",
        }
        if self.history:
            n = max(1, math.ceil(0.1 * len(self.history)))
            first, last = slice(0, n), slice(len(self.history) - n, None)
            scores.update({
                "fsha_ae_mse": _window_mean(self.history, AE_MSE, last) / 4,
                "fsha_ae_mse_initial": _window_mean(self.history, AE_MSE, first) / 4,
                "fsha_critic_loss": _window_mean(self.history, CRITIC_LOSS, last),
                "fsha_wasserstein": _window_mean(self.history, WASSERSTEIN, last),
                "fsha_gp": _window_mean(self.history, GP, last),
            })
        else:
            notes["fsha_iterations"] = "no hijacked step ran: the decoder is untrained"
        return AttackOutput(
            reconstructions=reconstructions,
            scores=scores,
            notes=notes,
            diverged=fsha_diverged(self.history) or not finite,
        )
