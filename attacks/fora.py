"""FORA: feature-oriented reconstruction through a substitute client trained by feature-level transfer."""
from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attacks.base import ATTACKS, AttackOutput, PassiveAttack, config_for, scale_counts
from attacks.budget_table import MeasuredBudget
from attacks.decoder_nets import ConvImageDecoder, fit, predict
from attacks.fora_config import CONFIGS, FORAConfig
from attacks.fora_nets import ConvCritic, Substitute, gradient_penalty, substitute_head
from attacks.mmd import mk_mmd
from attacks.payload_moments import PayloadMomentTie
from attacks.view import AttackerView, Capability
from bench.attack_knobs import BUDGET, MOMENT_TIE, SUBSTITUTE
from bench.profiles import INFERENCE_BATCH_SIZE
from bench.run.device import forked_rng, seeded_permutation
from defenses.payload import Payload, samples_of


@dataclass(frozen=True)
class FORAHistory:
    """What the substitute/critic phase recorded, one entry per iteration.

    Attributes:
        mmd: the MK-MMD of each substitute step's batches.
        critic_gap: ``mean D(s) − mean D(z)`` of each critic step (before its update): the critic's
            estimate of the Wasserstein-1 distance between substitute and victim cut maps (NaN where
            that step's gradient penalty was not finite).
        distance: mean ``‖s_i − z_j‖`` over that step's cross pairs, an upper bound of the gap for a
            1-Lipschitz critic.
        mmd_initial: MK-MMD on the fixed evaluation samples before training.
        mmd_final: the same after training.
    """

    mmd: tuple[float, ...]
    critic_gap: tuple[float, ...]
    distance: tuple[float, ...]
    mmd_initial: float
    mmd_final: float


def _tail_mean(values: tuple[float, ...], fraction: float) -> float:
    n = max(1, math.ceil(fraction * len(values)))
    return sum(values[-n:]) / n


def fora_divergence(history: FORAHistory, *, window: float = 0.1, lipschitz_slack: float = 2.0) -> str | None:
    """Why the substitute phase counts as collapsed, or ``None`` when it looks healthy.

    Collapsed when (checked in this order) any recorded value is non-finite; the final MK-MMD is no
    lower than the initial one (the substitute did not approach the victim's cut-map distribution);
    or the critic gap, averaged over the last ``window`` of iterations, exceeds ``lipschitz_slack``
    times the mean cross distance of the same iterations (the critic escaped the Lipschitz
    constraint and its scores run away).
    """
    series = history.mmd + history.critic_gap + history.distance + (history.mmd_initial, history.mmd_final)
    if not all(math.isfinite(v) for v in series):
        return "non-finite loss"
    if history.mmd_final >= history.mmd_initial:
        return f"MK-MMD not reduced ({history.mmd_initial:.4g} → {history.mmd_final:.4g})"
    if history.critic_gap:
        gap, bound = _tail_mean(history.critic_gap, window), _tail_mean(history.distance, window)
        if gap > lipschitz_slack * bound:
            return f"critic gap {gap:.4g} exceeds {lipschitz_slack:g} × the 1-Lipschitz bound {bound:.4g}"
    return None


def fora_diverged(history: FORAHistory, **kwargs: float) -> bool:
    """Whether :func:`fora_divergence` finds a collapse."""
    return fora_divergence(history, **kwargs) is not None


CHECK_EVERY = 50  # substitute steps between reads of the losses from the device (one host sync each)


def _read_transfer(steps: list[Tensor]) -> tuple[list[float], list[float], list[float]]:
    """The transfer phase's MMD, critic gap and distance per step, read in one transfer and cut after
    the first non-finite step (the phase stops there)."""
    mmd, gap, distance = [], [], []
    for loss_mmd, gap_value, penalty, dist in torch.stack(steps).tolist() if steps else []:
        mmd.append(loss_mmd)
        gap.append(gap_value if math.isfinite(penalty) else math.nan)
        distance.append(dist)
        if not (math.isfinite(mmd[-1]) and math.isfinite(gap[-1])):
            break
    return mmd, gap, distance


class _Batches:
    """Endless equal-size batches of indices: seeded reshuffles, partial batches dropped."""

    def __init__(self, n: int, size: int, generator: torch.Generator, device: torch.device | str = "cpu") -> None:
        self.n, self.size, self.generator, self.device = n, size, generator, device
        self.order, self.pos = self._shuffled(), 0

    def _shuffled(self) -> Tensor:
        return seeded_permutation(self.n, self.generator, device=self.device)

    def __next__(self) -> Tensor:
        if self.pos + self.size > self.n:
            self.order, self.pos = self._shuffled(), 0
        self.pos += self.size
        return self.order[self.pos - self.size : self.pos]


@ATTACKS.register("fora")
class FORA(PassiveAttack):
    """FORA: train a substitute client whose payloads match the victim's, a decoder that inverts the
    substitute on the attacker's own images, and apply that decoder to the victim's payloads.

    Every network reads *cut maps* (:meth:`~defenses.base.Defense.cut_map`: raw ``z``, ``R z̃`` for
    every projection, LightSplit-L included, the dense top-K map, the server 1×1 output; DP: the noisy
    payload mapped alike), so the critic and decoder are the same classes and sizes for every defense
    of a cut. Three phases on a snapshot of the targets' cut maps ``m = view.cut_map(z)`` (the paper's
    sequential description; the released code interleaves them with victim training):

    1. Substitute ``s`` = a substitute head of a *different* architecture (``FORAConfig.substitute``,
       or the ``substitute`` knob: :class:`~attacks.fora_nets.SubstituteHead`, or the release's VGG-16-BN
       client part :class:`~attacks.fora_nets.VGGSubstituteHead`) followed by the attacker's copy of
       the defense (``view.defense_factory()``: public operations, R, the DP clip and noise, the
       trained server half frozen, a fresh client half trained as part of ``s``), read through
       ``cut_map``; top-K runs straight-through (``attacker_encode``) so the whole
       map, not only the kept support, gets a gradient. Each iteration draws equal-size batches of
       ``m`` and of aux images ``x_a`` with the attack's own generator, then
       (a) steps ``s`` on ``(1 − a)·mean D(s(x_a)) + a·MKMMD(m, s(x_a))``, the MK-MMD on the same cut
       maps flattened; (b) steps the critic ``D`` (:class:`ConvCritic`) on ``mean D(m) − mean
       D(s(x_a)) + λ·GP`` with the maps of (a) detached: ``D`` scores victim maps low, and ``s``
       moves toward them by lowering its score.
    2. Pseudo decoder (``ConvImageDecoder``) trained with MSE on ``(s(x_aux), x_aux)``, ``s`` frozen
       (DP noise still drawn, as on the victim's payloads).
    3. ``x̂ = clamp(decoder(m), 0, 1)`` for every target.

    Substitute head, critic and decoder are built at construction (:meth:`networks`) and trained in
    place by :meth:`run`.

    Deviations from the released code (X1aoyangXu/FORA):

    * Sequential phases on a snapshot (above): the decoder sees a finished substitute.
    * Networks: ``paper`` has the released substitute (VGG-16-BN, sized by the cut: ``[64, 64, M]``
      at the release's MobileNet 64×16×16 cut, victim ``mobilenet`` cut ``l2``) and critic (128/256
      wide, six blocks); ``smoke`` and ``cpu`` a two-conv substitute (knob ``substitute = "vgg"``:
      the VGG form) and a reduced critic. The pseudo decoder is the suite's ``ConvImageDecoder``
      (256 wide at ``paper``; released: ConvT(C→256, s2) + BN + LeakyReLU → Conv(256→3) + BN +
      tanh). The critic reads the cut map of every defense (released: the raw smashed data only).
    * Before training, the substitute's defense copy takes what the targets' payloads show of the
      client's defense state (:meth:`~defenses.base.Defense.align_to_observed`: Shredder's noise
      offset, DISCO's channel usage), as SDAR's simulator does; released FORA meets raw data only.
    * Substitute BatchNorm statistics are re-estimated on all aux images (cumulative average, no
      gradient) before the substitute is frozen; the decoder's pairs are then computed in eval
      mode (released: train-mode batch statistics). ``fora_mmd_*`` use the same recalibrated copies.
    * Images stay in [0, 1] with a sigmoid decoder (released: [-1, 1], BN + tanh).
    * The decoder trains by epochs over the aux set (``DecoderConfig``), not one step per iteration.
    * MK-MMD without the released constant ``2/(B − 1)`` (see :mod:`attacks.mmd`); a batch size above
      the number of targets or aux images is cut to the smaller of the two.
    * Budgets: ``paper`` = released (40,000 × 64; decoder lr 1e-4 for 512 aux epochs ≈ 40,000 steps;
      critic 128 wide with six blocks; substitute 64 wide). ``cpu`` = 1,000 × 64, critic 16 wide
      with one block, decoder 10 epochs at width 32 and lr **1e-3**: at lr 1e-4 its ~300 steps
      leave it underfit (MNIST raw: train MSE 0.093, SSIM 0.31, against 0.011 and 0.65 at 1e-3);
      2,000 iterations bought no SSIM (0.657 vs 0.647). ``smoke``: 4 iterations, 1 decoder epoch.
      MnistNet split-2, 1,000 MNIST targets, 2,000 aux images, one torch thread on a busy 2-core
      box: 76 s (raw) and 58 s (LightSplit-F, CR 8) per attack, ~50 ms per iteration and
      ~0.1 s per decoder step (measured before the critic read cut maps).
      On CIFAR-10 (JPEG) at SimpleCNN's 64×8×8 cut the cpu budget leaks nothing, even on raw:
      SSIM 0.113 at ×1 and 0.070 at ×4 against the mean image's 0.130, and no better with the
      released VGG-style substitute, a 64-wide two-block critic or a substitute lr of 1e-3
      (``benchmarks/fora_variants.py``); the MK-MMD falls while the reconstructions do not
      improve. Read FORA there as not run at a converged budget, not as a private defense. At the
      release's cut (MobileNet ``l2``, 64×16×16) with the VGG substitute, the cpu budget costs about
      0.55 s per iteration on one thread (the 64-wide 32×32 convolutions dominate; a critic 32 or 64
      wide with two blocks: 0.5–0.9 s; the released critic ≈ 2.6 s), so ``cpu`` keeps its critic and
      1,000 iterations there: ~10 min per attack (``results/issue39-fora-released-cut``).
    * The bench records every row's ``transfer_r2`` (:mod:`bench.run.transfer`, from the head named by
      ``substitute_network``): how much of the victim head's maps a ridge regression from the
      substitute's explains on held-out aux images, against the raw pixels' (the release logs a
      substitute-to-victim feature MSE instead, also with the victim in hand).

    Diverged: :func:`fora_divergence` — a non-finite value, the MK-MMD on fixed samples not lower
    after training than before, or a critic gap beyond twice its 1-Lipschitz bound. The paper
    leaves such collapsed runs out; the bench records them through ``diverged``.

    Paper: Xu et al., "A Stealthy Wrongdoer: Feature-Oriented Reconstruction Attack against Split
    Learning", CVPR 2024.
    Threat model: passive semi-honest server holding the targets' payloads, same-distribution aux
    images (``aux_data``) and the defense's public state (``defense_public_state``); it does not
    know the client architecture and never queries the client.

    Attributes:
        history: the :class:`FORAHistory` of the last :meth:`run` (``None`` before).

    Args:
        view: what the server holds.
        profile: budget profile (``smoke``, ``cpu``, ``paper``), used unless ``config`` is given.
        seed: seeds every initialisation, batch order, interpolation and DP draw of the attack.
        budget: multiplier on the substitute's iterations and the pseudo decoder's epochs.
        moment_tie: weight of a term in the substitute's loss, absent from the released code: the
            standardised gap of its cut maps' batch mean to the targets' per-element mean
            (:class:`~attacks.payload_moments.PayloadMomentTie` over the whole snapshot). 0 (default):
            FORA as published. The MK-MMD matches the two distributions without identifying the
            client's channels, as SDAR's payload critic does not (``benchmarks/RESULTS.md``).
        config: an explicit configuration, overriding the profile's.

    Raises:
        MissingCapabilityError: when the view lacks a required capability or is not image data.
        ValueError: for an unknown profile, a non-``(C, H, W)`` cut, fewer than two targets or aux
            images, or a ``moment_tie`` out of [0, 100].
    """

    knobs = (BUDGET, MOMENT_TIE, SUBSTITUTE)
    substitute_network = "substitute_head"
    requires = frozenset({Capability.AUX_DATA, Capability.DEFENSE_PUBLIC_STATE})
    kinds = ("image",)
    headline_metric = "ssim"
    budget_table = (
        MeasuredBudget(profile="cpu", dataset="mnist", victim="mnistnet", cut="split-2", budget=16, verdict="unknown",
                       evidence="results/issue12-convergence: raw, x1 -> x4 +0.106 and x4 -> x16 +0.057 SSIM on seed 0 (x4 "
                                "not converged); x64 not run"),
        MeasuredBudget(profile="cpu", dataset="cifar10-jpeg", victim="simplecnn", cut="l2h", budget=1, verdict="unstable",
                       evidence="results/issue13-cifar10-jpeg: raw, x4 falls by 0.043 SSIM on seed 0 (0.113 -> 0.070), both "
                                "under the floor's 0.130: the substitute does not transfer at this cut"),
        MeasuredBudget(profile="cpu", dataset="cifar10-jpeg", victim="mobilenet", cut="l2", budget=1, verdict="unknown",
                       evidence="results/issue39-fora-released-cut: raw, SSIM 0.328, 0.349, 0.288 on seeds 0-2 against "
                                "the floor's 0.130; x4 not run"),
    )
    configs = CONFIGS

    def __init__(
        self, *, view: AttackerView, profile: str, seed: int = 0, budget: float = 1.0, moment_tie: float = 0.0,
        substitute: str = "profile", config: FORAConfig | None = None,
    ) -> None:
        super().__init__(view=view, profile=profile, seed=seed, budget=budget)
        self.moment_tie = MOMENT_TIE.check(moment_tie)
        config = scale_counts(config_for("fora", self.configs, profile, config), self.budget, "iterations")
        config = dataclasses.replace(config, decoder=scale_counts(config.decoder, self.budget, "epochs"))
        if SUBSTITUTE.check(substitute) != "profile":
            config = dataclasses.replace(config, substitute=substitute)
        if len(view.cut_shape) != 3:
            raise ValueError(f"fora needs a (C, H, W) cut, got {view.cut_shape}")
        n_targets = samples_of(view.targets.payloads) if view.targets.payloads is not None else 0
        n_aux = len(view.aux.inputs) if view.aux is not None and view.aux.inputs is not None else 0
        if min(n_targets, n_aux) < 2:
            raise ValueError(f"fora needs at least 2 targets and 2 aux images, got {n_targets} and {n_aux}")
        self.config = config
        self.history: FORAHistory | None = None
        with forked_rng():
            torch.manual_seed(self.seed)
            self.substitute = Substitute(
                substitute_head(config.substitute, view.input_shape, view.cut_shape, config.substitute_width),
                view.defense_factory(),
            )
            self.critic = ConvCritic(view.cut_shape, config.critic_width, config.critic_blocks)
            self.decoder = ConvImageDecoder(view.cut_shape, view.input_shape, config.decoder.width)

    def networks(self) -> dict[str, nn.Module]:
        """The substitute head, the critic and the pseudo decoder (the defense copy is not the attacker's).

        After :meth:`run` the substitute head holds the BatchNorm statistics re-estimated on the aux
        images, those its frozen copy used; in evaluation mode it maps images as the decoder's pairs did."""
        return {"substitute_head": self.substitute.head, "critic": self.critic, "decoder": self.decoder}

    def run(self) -> AttackOutput:
        """Train substitute and critic, then the pseudo decoder; reconstruct every target."""
        with forked_rng():
            torch.manual_seed(self.seed)  # the DP noise of the substitute's path
            return self._run()

    def _run(self) -> AttackOutput:
        config, view, dtype = self.config, self.view, torch.get_default_dtype()
        maps = view.cut_map(view.targets.payloads).to(dtype)
        aux = view.aux.inputs.to(dtype)
        generator = torch.Generator().manual_seed(self.seed)
        n_eval = min(config.eval_size, len(maps), len(aux))
        maps_eval = maps[seeded_permutation(len(maps), generator, device=maps.device)[:n_eval]]
        aux_eval = aux[seeded_permutation(len(aux), generator, device=aux.device)[:n_eval]]

        self._align_substitute(view.targets.payloads, aux)
        mmd_initial = _mmd(maps_eval, self._frozen(aux).cut_map(aux_eval))
        mmd, gap, distance = self._transfer(maps, aux, generator)
        frozen = self._frozen(aux)
        self.substitute.head.load_state_dict(frozen.head.state_dict())  # same weights; the re-estimated statistics
        mmd_final = _mmd(maps_eval, frozen.cut_map(aux_eval))
        history = self.history = FORAHistory(tuple(mmd), tuple(gap), tuple(distance), mmd_initial, mmd_final)

        with torch.no_grad():
            aux_maps = torch.cat([frozen.cut_map(part) for part in aux.split(INFERENCE_BATCH_SIZE)])
        decoder_history = fit(self.decoder, (aux_maps.to(dtype),), aux, config.decoder, self.seed)
        recon = predict(self.decoder, (maps,))
        reason = fora_divergence(history)
        notes = {
            "fora_mmd_initial": "MK-MMD(victim cut maps, substitute cut maps of aux images) before training",
            "fora_mmd_final": "the same after training (lower: the substitute approached the victim's cut maps)",
            "fora_critic_gap": "mean D(s) − mean D(z) over the last 10% of critic steps (Wasserstein-1 estimate)",
            "fora_decoder_train_mse": "the pseudo decoder's training MSE on the aux images, last epoch",
            "fora_decoder_heldout_best": "its MSE on held-out aux images at the kept epoch (early stopping)",
        }
        if reason is not None:
            notes["diverged"] = reason
        tied = {}
        if self.moment_tie > 0:
            tied["fora_tie_floored"] = self.payload_moments.floored_share()
            notes["fora_tie_floored"] = "moment tie: mean share of cut-map elements whose spread was floored"
        tail = max(1, math.ceil(0.1 * len(gap)))
        return AttackOutput(
            reconstructions=torch.nan_to_num(recon, nan=0.0).clamp(0.0, 1.0),
            scores={
                "fora_mmd_initial": _finite(mmd_initial),
                "fora_mmd_final": _finite(mmd_final),
                "fora_critic_gap": _finite(sum(gap[-tail:]) / tail) if gap else None,
                "fora_iterations": float(len(mmd)),
                **{k: _finite(v) for k, v in decoder_history.scores("fora_decoder").items()},
                **tied,
            },
            notes=notes,
            diverged=reason is not None,
        )

    def _transfer(self, maps: Tensor, aux: Tensor, generator: torch.Generator) -> tuple[list[float], ...]:
        """Phase 1: alternate substitute and critic steps; stops within CHECK_EVERY steps of a non-finite loss, the records ending at it."""
        config, substitute, critic = self.config, self.substitute, self.critic
        size = min(config.batch_size, len(maps), len(aux))
        target_batches = _Batches(len(maps), size, generator, maps.device)
        aux_batches = _Batches(len(aux), size, generator, aux.device)
        sub_opt = torch.optim.Adam(substitute.trainable(), lr=config.substitute_lr)
        critic_opt = torch.optim.Adam(critic.parameters(), lr=config.critic_lr)
        substitute.train()
        critic.train()
        steps: list[Tensor] = []  # per step: MMD, -Wasserstein, penalty, mean distance (on the device)
        tie = self.payload_moments = PayloadMomentTie(decay=0.0)
        if self.moment_tie > 0:
            tie.observe(maps)  # the snapshot's exact per-element moments
        for step in range(config.iterations):
            z, x_a = maps[next(target_batches)], aux[next(aux_batches)]
            # (a) substitute step: the critic's gradient reaches s but its weights stay put.
            critic.requires_grad_(False)
            s = substitute.cut_map(x_a)
            loss_mmd = mk_mmd(z.flatten(1), s.flatten(1))
            loss = (1 - config.alpha) * critic(s).mean() + config.alpha * loss_mmd
            if self.moment_tie > 0:
                loss = loss + self.moment_tie * tie.gap(s)
            sub_opt.zero_grad(set_to_none=True)
            loss.backward()
            sub_opt.step()
            critic.requires_grad_(True)
            # (b) critic step on the same batches, substitute maps of (a) detached.
            s = s.detach()
            wasserstein = critic(z).mean() - critic(s).mean()
            penalty = gradient_penalty(critic, s, z, weight=config.lambda_gp, generator=generator)
            critic_opt.zero_grad(set_to_none=True)
            (wasserstein + penalty).backward()
            critic_opt.step()
            distance = torch.cdist(s.flatten(1), z.flatten(1)).mean()
            steps.append(torch.stack([v.detach().float() for v in (loss_mmd, -wasserstein, penalty, distance)]))
            if (step + 1) % CHECK_EVERY == 0 and not bool(torch.isfinite(torch.stack(steps[-CHECK_EVERY:])[:, :3]).all()):
                break
        return _read_transfer(steps)

    @torch.no_grad()
    def _align_substitute(self, observed: Payload, aux: Tensor) -> None:
        """Let the substitute's defense copy take whatever the targets' payloads show of the client's
        defense state (:meth:`~defenses.base.Defense.align_to_observed`: Shredder's noise offset,
        DISCO's channel usage), as SDAR's fresh simulator does; simulated in training mode on as
        many aux images, outside every random stream, without gradients (the hook moves parameters
        in place)."""
        n = min(samples_of(observed), len(aux))

        def simulate():
            with forked_rng():
                return self.substitute.train()(aux[:n])

        self.substitute.defense.align_to_observed(observed, simulate)

    @torch.no_grad()
    def _frozen(self, aux: Tensor) -> Substitute:
        """An eval-mode copy of the substitute whose head's BatchNorm statistics are re-estimated on ``aux``
        (the defense copy's trained server half keeps its own)."""
        frozen = copy.deepcopy(self.substitute)
        for module in frozen.head.modules():
            if isinstance(module, nn.modules.batchnorm._BatchNorm):
                module.reset_running_stats()
                module.momentum = None  # cumulative average over the aux batches
        frozen.head.train()
        for part in aux.split(self.config.batch_size):
            if len(part) > 1:
                frozen.head(part)
        return frozen.eval().requires_grad_(False)


@torch.no_grad()
def _mmd(maps: Tensor, substitute_maps: Tensor) -> float:
    return float(mk_mmd(maps.flatten(1), substitute_maps.flatten(1)))


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
