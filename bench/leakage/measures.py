"""The attack-free measures of a trained victim, recorded beside its utility metrics.

:func:`attack_free_measures` reads the trained client white-box (its members' inputs, its head and
its defense's encoder, their Jacobians), so it is the benchmark's own analysis, never an attacker's;
:func:`bench.run.training.train_victim` merges its values into the victim's metrics, so they sit on
every row of every cell of that victim and are cached with its checkpoint. A measure that does not
apply to the defense is ``None``, and :func:`attack_free_notes` says why (the names and meanings:
:mod:`bench.leakage.names`).

- ``dcor_input_payload``: Székely's distance correlation (plain distances) between the flattened
  inputs and the dense payloads (:func:`defenses.payload.as_vector`) of ``MEASURE_SAMPLES`` members,
  every defense. It assumes nothing about the encoder; it is a dependence statistic, not a bound.
- ``gaussian_channel_bits`` and ``gaussian_channel_class_bits``: for a dense payload clipped and noised
  by the ``+dp`` transform, :mod:`bench.leakage.channel` on the clipped payloads of the same members
  with the transform's noise std ``σ·clip``.
- ``dfil`` and ``dfil_mse_bound``: :mod:`bench.leakage.fisher` on the first ``FISHER_SAMPLES`` of those
  members, for a Gaussian release: ``+dp`` over a deterministic dense encoder (the clipped encoder's
  Jacobian, noise ``σ·clip``), and MID's sampled latent (its posterior mean and input-dependent std).
  Shredder's noise is not Gaussian and not regular (see :data:`SHREDDER_NOT_REGULAR`).

Members are each encoded through their own client's head, in evaluation mode (so every noisy
defense draws as it does for the server), from a fixed seed inside a forked random state: the
victim's later random streams are what they would be without the measures.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

import torch
from torch import Tensor, nn

from bench.data.splits import CarvedData
from bench.leakage.channel import gaussian_channel_bits, gaussian_channel_class_bits
from bench.leakage.fisher import dfil, gaussian_fisher_trace, heteroscedastic_fisher_trace
from bench.leakage.names import CHANNEL_BITS, CHANNEL_CLASS_BITS, DCOR, DFIL, DFIL_MSE_BOUND, MEASURES
from bench.profiles import INFERENCE_BATCH_SIZE
from bench.run.device import forked_rng, seeded_permutation
from bench.run.engine import SplitModel
from defenses.base import Defense, probe_batch
from defenses.compose import ComposedDefense
from defenses.dp import GaussianPayloadNoise, clip_rows
from defenses.mid import MID
from defenses.nopeek import distance_correlation
from defenses.payload import GroupedPayload, SparsePayload, as_vector, values_of
from defenses.shredder import Shredder

MEASURE_SAMPLES = 2000  # members the dependence and channel measures read (all of them where fewer)
FISHER_SAMPLES = 64  # the first of those whose encoder Jacobians dFIL reads
MEASURE_SEED = 0  # the members' choice and every draw of the measures

NO_GAUSSIAN_NOISE = "no Gaussian noise of a fixed scale on the payload (the bound needs the +dp transform)"
DETERMINISTIC = "no noise: a deterministic encoder's Fisher information is unbounded"
NO_NOISE_SCALE = "the +dp transform adds no noise here (sigma x clip = 0), so no bound is finite"
SPARSE = "a sparse payload: its positions cross without noise, so the Gaussian noise on its values bounds nothing"
GROUPED = "a grouped payload: each row superposes several samples, so no one sample fixes its noise-free part"
NOISY_BASE = "noise drawn before the +dp clip: the composition's Fisher information has no closed form here"
MID_CHANNEL = "MID's noise scale depends on the input and its latent is not clipped: no fixed-power Gaussian channel"
SHREDDER_NOT_REGULAR = ("Shredder's evaluation noise is sorted into its tensor's rank order: its support is an ordered "
                        "cone, so the location family is not regular and its Fisher information is undefined")
OTHER_NOISE = "the encoder draws noise of a form dFIL is not computed for"
ZERO_FISHER = "dFIL is 0 (the encoder's Jacobian vanishes on the members read): the Cramér-Rao bound is infinite"


def attack_free_measures(model: SplitModel, data: CarvedData, client_indices: list[Tensor]) -> dict[str, float | None]:
    """Every measure of :data:`bench.leakage.names.MEASURES` for the trained ``model``: a float, or
    ``None`` where it does not apply (:func:`attack_free_notes` of the defense and these values says why).

    Args:
        model: the trained split model (left in the training mode it came in).
        data: the cell's data; its members are read.
        client_indices: each client's member indices (who encodes which member).
    """
    notes = attack_free_notes(model.defense)
    out: dict[str, float | None] = dict.fromkeys(MEASURES)
    was_training = model.training
    model.eval()
    try:
        with forked_rng():
            torch.manual_seed(MEASURE_SEED)
            x, y, owners = _chosen_members(data, client_indices)
            cut = _cut_activations(model, x, owners)
            payloads = _in_batches(lambda z: as_vector(model.defense.encode(z)), cut)
            out[DCOR] = float(distance_correlation(x.flatten(1).float(), payloads.float(), exponent=1.0))
            transform = _gaussian_transform(model.defense)
            if CHANNEL_BITS not in notes:
                clipped = _in_batches(_clipped_encoder(model.defense, transform), cut)
                noise_std = float(transform.sigma * transform.clip_norm)
                out[CHANNEL_BITS] = gaussian_channel_bits(clipped, noise_std)
                out[CHANNEL_CLASS_BITS] = gaussian_channel_class_bits(clipped, y, noise_std)
            if DFIL not in notes:
                out[DFIL] = _dfil(model, x[:FISHER_SAMPLES], owners[:FISHER_SAMPLES], transform)
                out[DFIL_MSE_BOUND] = 1 / out[DFIL] if out[DFIL] > 0 else None
    finally:
        model.train(was_training)
    return out


def attack_free_notes(defense: Defense, measured: Mapping[str, float | None] | None = None) -> dict[str, str]:
    """Why each measure that does not apply to ``defense`` is absent, by measure name (the distance
    correlation applies to every defense). Decided from the defense alone: which noise it adds, and
    whether its base encoder is deterministic and its payload dense on a seeded probe batch (drawn in
    a forked random state, in evaluation mode; the +dp transform itself never runs, so an uncalibrated
    clip is left alone); and, given the ``measured`` values, a dFIL of 0 (no finite MSE bound)."""
    transform = _gaussian_transform(defense)
    if transform is not None:
        payload, deterministic = _probe(defense.base)
        kind = SPARSE if isinstance(payload, SparsePayload) else GROUPED if isinstance(payload, GroupedPayload) else None
        if float(transform.sigma * transform.clip_norm) == 0:
            channel = fisher = NO_NOISE_SCALE
        else:
            channel, fisher = kind, kind or (None if deterministic else NOISY_BASE)
    elif isinstance(defense, MID):
        channel, fisher = MID_CHANNEL, None
    elif isinstance(defense, Shredder):
        channel, fisher = NO_GAUSSIAN_NOISE, SHREDDER_NOT_REGULAR
    else:
        channel, fisher = NO_GAUSSIAN_NOISE, DETERMINISTIC if _probe(defense)[1] else OTHER_NOISE
    notes = {}
    if channel is not None:
        notes.update({CHANNEL_BITS: channel, CHANNEL_CLASS_BITS: channel})
    if fisher is not None:
        notes.update({DFIL: fisher, DFIL_MSE_BOUND: fisher})
    elif measured is not None and measured.get(DFIL) == 0:
        notes[DFIL_MSE_BOUND] = ZERO_FISHER
    return notes


def _gaussian_transform(defense: Defense) -> GaussianPayloadNoise | None:
    """The +dp transform where it is the defense's only (hence last) payload transform."""
    if isinstance(defense, ComposedDefense):
        transforms = list(defense.client_side.transforms)
        if len(transforms) == 1 and isinstance(transforms[0], GaussianPayloadNoise):
            return transforms[0]
    return None


@torch.no_grad()
def _probe(defense: Defense):
    """``defense``'s payload of a seeded probe batch, and whether a second encoding repeats it exactly."""
    was_training = defense.training
    defense.eval()
    try:
        with forked_rng():
            probe = probe_batch(defense, 4)
            first, second = defense.encode(probe), defense.encode(probe)
    finally:
        defense.train(was_training)
    same = torch.equal(values_of(first), values_of(second))
    if isinstance(first, SparsePayload):
        same = same and torch.equal(first.indices, second.indices)
    return first, same


def _chosen_members(data: CarvedData, client_indices: list[Tensor]) -> tuple[Tensor, Tensor, Tensor]:
    """The first ``MEASURE_SAMPLES`` members of a seeded permutation: inputs, labels, owning client."""
    members = data.members
    owners = torch.empty(len(members), dtype=torch.long, device=members.y.device)
    for client, idx in enumerate(client_indices):
        owners[idx.to(owners.device)] = client
    order = seeded_permutation(len(members), torch.Generator().manual_seed(MEASURE_SEED), device=members.y.device)
    chosen = order[:MEASURE_SAMPLES]
    return members.x[chosen], members.y[chosen], owners[chosen]


@torch.no_grad()
def _cut_activations(model: SplitModel, x: Tensor, owners: Tensor) -> Tensor:
    """Each row's cut activation through the head of the client that owns it, in ``x``'s order."""
    out = None
    for client in owners.unique().tolist():
        idx = (owners == client).nonzero().view(-1)
        rows = _in_batches(model.head_of(client), x[idx])
        out = rows.new_empty(len(x), *rows.shape[1:]) if out is None else out
        out[idx] = rows
    return out


@torch.no_grad()
def _in_batches(fn: Callable[[Tensor], Tensor], rows: Tensor) -> Tensor:
    """``fn`` over ``rows`` ``INFERENCE_BATCH_SIZE`` at a time (a bound on memory), joined."""
    return torch.cat([fn(rows[i : i + INFERENCE_BATCH_SIZE]) for i in range(0, len(rows), INFERENCE_BATCH_SIZE)])


def _clipped_encoder(defense: ComposedDefense, transform: GaussianPayloadNoise) -> Callable[[Tensor], Tensor]:
    """The noise-free part of a +dp defense's release from cut activations: the base payload, clipped."""
    return lambda z: clip_rows(values_of(defense.base.encode(z)).flatten(1), transform.clip_norm)


def _dfil(model: SplitModel, x: Tensor, owners: Tensor, transform: GaussianPayloadNoise | None) -> float:
    """Mean dFIL over ``x``, each row through its owner's head (a +dp or a MID defense)."""
    generator = torch.Generator(device=x.device).manual_seed(MEASURE_SEED)
    if transform is not None:
        encoder = _clipped_encoder(model.defense, transform)
        noise_std = float(transform.sigma * transform.clip_norm)

        def trace(head: nn.Module, part: Tensor) -> Tensor:
            return gaussian_fisher_trace(lambda v: encoder(head(v)), part, noise_std, generator=generator)
    else:
        def trace(head: nn.Module, part: Tensor) -> Tensor:
            return heteroscedastic_fisher_trace(lambda v: model.defense.posterior(head(v)), part, generator=generator)

    traces = [trace(model.head_of(client), x[owners == client]) for client in owners.unique().tolist()]
    return dfil(torch.cat(traces), x[0].numel())
