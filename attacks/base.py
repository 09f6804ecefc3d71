"""The Attack base class: a declared threat model, declared requirements, one verb (``run``).

An attack receives an :class:`~attacks.view.AttackerView` holding only what its threat model grants
the server. Requirements are checked when the attack is constructed, so a wrong pairing fails at
once with a message naming what is missing (after ART's estimator requirements).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from typing import ClassVar

from torch import Tensor

from attacks.view import AttackerView, Capability
from bench.registry import Registry


class ThreatModel(str, Enum):
    """When and how the attacker acts."""

    PASSIVE = "passive"  # after training, from what the server stored
    COTRAIN = "cotrain"  # watches the training run without changing it
    ACTIVE = "active"  # changes what the client receives (a malicious server)


class MissingCapabilityError(ValueError):
    """The view lacks something the attack requires."""


@dataclass
class AttackOutput:
    """What an attack returns.

    Attributes:
        reconstructions: ``(n, *input_shape)`` reconstructions in [0, 1] of the targets at
            ``target_index`` (image attacks); ``None`` for probes.
        target_index: which of the view's targets were reconstructed (``None``: all of them, in order).
        scores: metrics the attack computes itself (probes: R², re-identification accuracy, ...).
        notes: per-metric explanations (e.g. why a value is missing).
        diverged: the attack's own training collapsed (see the attack's docstring for its criterion).
    """

    reconstructions: Tensor | None = None
    target_index: Tensor | None = None
    scores: dict[str, float | None] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    diverged: bool = False


class Attack(ABC):
    """Base class of every attack.

    Subclasses declare ``threat_model``, ``requires`` (capabilities of the view), ``kinds`` (the data
    kinds they apply to: ``image``, ``tabular``) and implement :meth:`run`.

    Co-training attacks (``COTRAIN``) also implement ``on_step(view: CutView)``: they are built
    before training from a view without targets, watch every step, and get the trained run's view
    through :meth:`update_view` before :meth:`run`. Active attacks (``ACTIVE``) implement
    ``client_gradient(view: CutView) -> Tensor`` and may set ``training_epochs`` (the length of the
    hijacked run; default: the profile's).

    Args:
        view: what the server holds.
        profile: name of the budget profile (``smoke``, ``cpu``, ``paper``).
        seed: the attacker's own seed.

    Raises:
        MissingCapabilityError: when the view lacks a required capability or has the wrong data kind.
    """

    threat_model: ClassVar[ThreatModel] = ThreatModel.PASSIVE
    requires: ClassVar[frozenset[Capability]] = frozenset()
    kinds: ClassVar[tuple[str, ...]] = ("image",)

    def __init__(self, *, view: AttackerView, profile: str, seed: int = 0) -> None:
        self.profile = profile
        self.seed = seed
        self.update_view(view)

    def update_view(self, view: AttackerView) -> None:
        """Hand the attack a (newer) view, e.g. the trained run's targets after co-training."""
        missing = sorted(c.value for c in self.requires - view.granted)
        if missing:
            raise MissingCapabilityError(f"{type(self).__name__} needs {', '.join(missing)}, which the view does not grant")
        if view.kind not in self.kinds:
            raise MissingCapabilityError(f"{type(self).__name__} applies to {'/'.join(self.kinds)} data, not {view.kind}")
        self.view = view

    @abstractmethod
    def run(self) -> AttackOutput:
        """Carry out the attack on the view's targets."""


def budget_for(attack: str, budgets: dict, profile: str, override=None):
    """The attack's budget for ``profile`` (or ``override`` when given).

    Raises:
        ValueError: for a profile the attack has no budget for.
    """
    if override is not None:
        return override
    if profile not in budgets:
        raise ValueError(f"{attack}: unknown profile '{profile}' (known: {', '.join(budgets)})")
    return budgets[profile]


ATTACKS: Registry[type[Attack]] = Registry("attack")
