"""The attacker's view: only what the server legitimately holds (breaching's threat-model boundary).

The view never holds the client's head, tail or private inputs. Payloads and gradients are tensors
(copies), the backbone and the server half of the defense are deep copies, and the client
architecture is a factory that builds a *fresh, untrained* copy. Everything else a stronger threat
model grants is a named :class:`Capability`, and is present only when granted.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable

from torch import Tensor, nn

from defenses.base import Defense
from defenses.payload import Payload


class ClientPath(nn.Module):
    """A path to the cut as a client runs it: a head, then a defense's encoder."""

    def __init__(self, head: nn.Module, defense: Defense) -> None:
        super().__init__()
        self.head = head
        self.defense = defense

    def forward(self, x: Tensor) -> Payload:
        return self.defense.encode(self.head(x))


class Capability(str, Enum):
    """Things an attack may require beyond the payloads of its targets."""

    AUX_DATA = "aux_data"  # labelled non-member data from the same distribution
    AUX_QUERIES = "aux_queries"  # payloads of the aux data through the trained client path (black box)
    CLIENT_ARCHITECTURE = "client_architecture"  # build fresh, untrained copies of the client path
    CUT_GRADIENTS = "cut_gradients"  # the gradients the server returns at the cut
    DEFENSE_PUBLIC_STATE = "defense_public_state"  # e.g. the projection R
    MEMBER_INPUTS = "member_inputs"  # white-box only: (payload, input) pairs of other members


@dataclass(frozen=True)
class Observation:
    """What the server holds about one set of samples; absent fields were not granted.

    Attributes:
        payloads: the payloads that crossed the cut.
        grads: gradient of the task loss with respect to each payload (``CUT_GRADIENTS``).
        inputs: the inputs (aux data the server owns, or white-box member pairs).
        labels: the labels (aux data only).
        groups: group ids, e.g. HAR subjects (aux data, and targets where a probe scores groups).
    """

    payloads: Payload | None = None
    grads: Tensor | None = None
    inputs: Tensor | None = None
    labels: Tensor | None = None
    groups: Tensor | None = None

    def __len__(self) -> int:
        for value in (self.inputs, self.labels, self.grads):
            if value is not None:
                return len(value)
        from defenses.payload import values_of

        return len(values_of(self.payloads)) if self.payloads is not None else 0


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
        client_factory: builds a fresh client path, head plus the defense's encoder with its public
            state (``CLIENT_ARCHITECTURE``).
        defense_factory: builds a fresh copy of the defense (public operations and state such as R;
            trainable parts freshly initialised; no DP noise) for attackers that pass their own
            features through the same bottleneck (``DEFENSE_PUBLIC_STATE``).
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
    client_factory: Callable[[], nn.Module] | None = None
    defense_factory: Callable[[], Defense] | None = None
