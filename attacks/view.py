"""What an attack receives: only what the server legitimately holds (breaching's threat-model boundary).

Two views, both built by the suite and never holding the client's head, tail, private inputs or
the client half of the defense:

- :class:`AttackerView`, after (or before) training: payloads and gradients as copies, the backbone
  and the server half of the defense as deep copies, the client architecture as a factory of
  *fresh, untrained* copies; everything a stronger threat model grants is a named
  :class:`Capability`, present only when granted.
- :class:`StepView`, each training step, for co-training and active attacks: that step's payload
  and cut gradient as copies, in U-shaped runs the gradient the client's tail returned, and the
  server's own live modules (:class:`ServerHandle`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import torch
from torch import Tensor, nn

from bench.profiles import INFERENCE_BATCH_SIZE
from defenses.base import Defense
from defenses.payload import GroupedPayload, Payload, as_vector, samples_of, take


def sample_vectors(defense: Defense, payload: Payload) -> Tensor:
    """Each sample's payload as a flat ``(B, n)`` vector, what attacks that read payloads sample by
    sample compare (UnSplit's feature match, the HAR probes, ``decoder-z``): the payload itself
    (:func:`~defenses.payload.as_vector`), except where one payload row stands for several samples
    (C3-SL): a row is no sample's own, so each sample is read as the server reads it, through the
    defense's public :meth:`~defenses.base.Defense.cut_map` (C3-SL: its unbinding with the public key)."""
    if isinstance(payload, GroupedPayload):
        return defense.cut_map(payload).flatten(1)
    return as_vector(payload)


class ClientPath(nn.Module):
    """A path to the cut as a client runs it: a head, then a defense's encoder."""

    def __init__(self, head: nn.Module, defense: Defense) -> None:
        super().__init__()
        self.head = head
        self.defense = defense

    def forward(self, x: Tensor) -> Payload:
        return self.defense.encode(self.head(x))


class AttackerClientPath(ClientPath):
    """A client path as an attacker simulates it (``client_factory``): the same forward, but
    straight-through where the defense's encoder blocks gradients (:meth:`Defense.attacker_encode`)."""

    def forward(self, x: Tensor) -> Payload:
        return self.defense.attacker_encode(self.head(x))

    def cut_map(self, x: Tensor) -> Tensor:
        """The public cut map of this path's payloads (:meth:`Defense.cut_map`)."""
        return self.defense.cut_map(self(x))


class Capability(str, Enum):
    """Things an attack may require beyond the payloads of its targets."""

    AUX_DATA = "aux_data"  # labelled non-member data from the same distribution
    AUX_QUERIES = "aux_queries"  # payloads of the aux data through the trained client path (black box)
    CLIENT_ARCHITECTURE = "client_architecture"  # build fresh, untrained copies of the client path
    CUT_GRADIENTS = "cut_gradients"  # the gradients the server returns at the cut
    DEFENSE_PUBLIC_STATE = "defense_public_state"  # e.g. the projection R
    MEMBER_INPUTS = "member_inputs"  # white-box only: (payload, input) pairs of other members
    TAIL_GRADIENTS = "tail_gradients"  # U-shaped only: the gradients the client's tail returns to the server


@dataclass(frozen=True)
class Observation:
    """What the server holds about one set of samples; absent fields were not granted.

    Attributes:
        payloads: the payloads that crossed the cut.
        grads: gradient of the task loss with respect to each payload (``CUT_GRADIENTS``).
        tail_grads: in U-shaped SL, the gradient the client's tail returns for each sample: of the
            client's task loss with respect to the backbone features the server sent down, one row
            per sample, at a training step of the trained victim (``TAIL_GRADIENTS``; aux samples only
            under ``AUX_QUERIES`` too, as if their labels were the client's).
        inputs: the inputs (aux data the server owns, or white-box member pairs).
        labels: the labels (aux data only).
        groups: group ids, e.g. HAR subjects (aux data, and targets where a probe scores groups).
    """

    payloads: Payload | None = None
    grads: Tensor | None = None
    tail_grads: Tensor | None = None
    inputs: Tensor | None = None
    labels: Tensor | None = None
    groups: Tensor | None = None

    def __len__(self) -> int:
        for value in (self.inputs, self.labels, self.grads, self.tail_grads):
            if value is not None:
                return len(value)
        return samples_of(self.payloads) if self.payloads is not None else 0


@dataclass(frozen=True)
class AttackerView:
    """Everything an attack may read.

    Attributes:
        granted: the capabilities this view grants.
        kind: ``image`` or ``tabular``.
        input_shape: per-sample input shape.
        num_classes: number of classes.
        cut_shape: per-sample shape of the cut activation.
        defense_name: the defense's registry name (public: the protocol is known).
        targets: the attacked members: their payloads (and cut gradients where granted); never inputs.
        backbone: a copy of the server's trained backbone.
        server_defense: a copy of the defense without its client half (decode, lift-back, R).
        public_state: the defense's public state (``DEFENSE_PUBLIC_STATE``).
        aux: non-member data (``AUX_DATA``; with payloads under ``AUX_QUERIES``).
        members: other members' (payload, input) pairs (``MEMBER_INPUTS``, white-box ceiling only).
        client_factory: builds a fresh client path as an attacker simulates it: a fresh head, then
            the whole defense (DP noise included) with its public state (R, the DP clip) and its
            trained server half, frozen; straight-through where the encoder blocks gradients
            (``CLIENT_ARCHITECTURE``).
        defense_factory: builds such a copy of the defense alone (optionally at another cut
            shape), for attackers that pass their own features through the same bottleneck
            (``DEFENSE_PUBLIC_STATE``).
    """

    granted: frozenset[Capability]
    kind: str
    input_shape: tuple[int, ...]
    num_classes: int
    cut_shape: tuple[int, ...]
    defense_name: str
    targets: Observation
    backbone: nn.Module
    server_defense: Defense
    public_state: dict[str, Tensor] | None = None
    aux: Observation | None = None
    members: Observation | None = None
    client_factory: Callable[[], AttackerClientPath] | None = None
    defense_factory: Callable[..., Defense] | None = None

    @torch.no_grad()
    def lift(self, payloads: Payload, batch_size: int = INFERENCE_BATCH_SIZE) -> Tensor:
        """What the server feeds its backbone: ``payloads`` decoded by the server half of the defense
        (LightSplit-F: ``R z̃``; LightSplit-L: its learned lift; learned 1×1: the server conv; top-K:
        the dense sparse map), in evaluation mode."""
        decode = self.server_defense.eval().decode
        n = samples_of(payloads)
        return torch.cat([decode(take(payloads, slice(i, i + batch_size))) for i in range(0, n, batch_size)])

    @torch.no_grad()
    def cut_map(self, payloads: Payload, batch_size: int = INFERENCE_BATCH_SIZE) -> Tensor:
        """The public cut-shaped map of ``payloads`` (:meth:`Defense.cut_map`: raw z, ``R z̃`` for every
        projection, the dense top-K map, the server 1×1 output), what every attack reads so that one
        attacker network serves every defense of a cut."""
        cut_map = self.server_defense.eval().cut_map
        n = samples_of(payloads)
        return torch.cat([cut_map(take(payloads, slice(i, i + batch_size))) for i in range(0, n, batch_size)])

    @torch.no_grad()
    def sample_vectors(self, payloads: Payload, batch_size: int = INFERENCE_BATCH_SIZE) -> Tensor:
        """Each sample's payload as a flat vector (:func:`sample_vectors` with the server's defense)."""
        defense = self.server_defense.eval()
        n = samples_of(payloads)
        return torch.cat([sample_vectors(defense, take(payloads, slice(i, i + batch_size))) for i in range(0, n, batch_size)])


@dataclass(frozen=True)
class ServerHandle:
    """The server's own live modules, as the server holds them during training: its backbone and
    the server half of the defense (:meth:`defenses.base.Defense.server_half`; no client half).

    Co-training attacks may run them (e.g. SDAR trains its simulator through the current backbone)
    but must not change them: the engine checks nothing here, the non-interference tests do.
    """

    backbone: nn.Module
    defense: Defense


@dataclass(frozen=True)
class StepView:
    """One training step as the server sees it.

    Attributes:
        step: global training step (0-based).
        epoch: training epoch.
        client: index of the client taking this turn.
        payload: the received payload (detached).
        grad: gradient of the loss with respect to the payload's values, which the server sends
            back (detached).
        labels: the batch labels, only in vanilla SL where the server holds them; else ``None``.
        server: the server's live modules.
        tail_grad: in U-shaped SL, the gradient the client's tail returned to the server at this step:
            of the client's (batch-mean) loss with respect to the backbone features the server sent
            down (detached); ``None`` in vanilla SL, where the tail is the server's.
    """

    step: int
    epoch: int
    client: int
    payload: Payload
    grad: Tensor
    labels: Tensor | None
    server: ServerHandle | None = None
    tail_grad: Tensor | None = None

