"""The attack contracts: passive, co-training and active attacks, each a base class.

An attack receives an :class:`~attacks.view.AttackerView` holding only what its threat model grants
the server. Requirements are checked when the attack is constructed, so a wrong pairing fails at
once with a message naming what is missing (after ART's estimator requirements).

The contract says how the attack meets the victim's training (:meth:`Attack.meet_victim`), so the
cell runner never asks which kind of attack it holds:

- :class:`PassiveAttack` runs after training, on the shared, cached victim;
- :class:`CotrainAttack` watches a training run through :meth:`CotrainAttack.on_step` and cannot
  change it (the victim is cached for the others);
- :class:`ActiveAttack` replaces the gradient the client receives
  (:meth:`ActiveAttack.client_gradient`) and gets its own, hijacked run.
"""
from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Protocol, TypeVar

from torch import Tensor, nn

from attacks.budget_table import MeasuredBudget
from attacks.view import AttackerView, Capability, StepView
from bench.attack_knobs import BUDGET
from bench.knobs import Knob
from bench.registry import Registry

C = TypeVar("C")


class ThreatModel(str, Enum):
    """When and how the attacker acts."""

    PASSIVE = "passive"  # after training, from what the server stored
    COTRAIN = "cotrain"  # watches the training run without changing it
    ACTIVE = "active"  # changes what the client receives (a malicious server)


class Scoring(str, Enum):
    """How reconstructions are scored; each scoring's metrics carry its suffix."""

    AS_RETURNED = ""
    MINMAX = "_minmax"  # each reconstruction min-max normalised first (UnSplit's released scoring)
    BLACK = "_black"  # an all-black image in place of each reconstruction (a floor on black-background data)
    GREY = "_grey"  # a constant 0.5 image in place of each reconstruction (a floor)


class MissingCapabilityError(ValueError):
    """The view lacks something the attack requires."""


@dataclass
class AttackOutput:
    """What an attack returns.

    Attributes:
        reconstructions: ``(n, *input_shape)`` reconstructions in [0, 1] of the targets at
            ``target_index`` (image attacks); ``None`` for probes.
        target_index: which of the view's targets were reconstructed or scored (``None``: all of
            them, in order).
        scores: metrics the attack computes itself (probes: R², re-identification accuracy, ...).
        notes: per-metric explanations (e.g. why a value is missing).
        diverged: the attack's own training collapsed (see the attack's docstring for its criterion).
        label_scores: ``(n, classes)`` label scores of the targets at ``target_index``, higher = more
            likely (label attacks, and SDAR's simulated tail); the bench scores them against the
            targets' true labels (:mod:`bench.metrics.labels`). ``None``: no label inferred.
        label_top1: whether each row's highest score is the attack's class decision; ``False`` for
            per-class scores that rank samples but decide no class (norm scoring): no top-1 accuracy.
    """

    reconstructions: Tensor | None = None
    target_index: Tensor | None = None
    scores: dict[str, float | None] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    diverged: bool = False
    label_scores: Tensor | None = None
    label_top1: bool = True


class VictimRuns(Protocol):
    """The training runs the suite can give an attack (implemented by the cell runner).

    ``Trained`` is the runner's trained victim; an attack never looks inside it.
    """

    def honest(self) -> Any:
        """The honest run, trained once and shared by every passive attack on the victim."""

    def view_before_training(self) -> AttackerView:
        """A view without targets, for attacks built before the run they watch or hijack."""

    def watched(self, attack: CotrainAttack) -> Any:
        """A run that calls ``attack.on_step`` after every step and is not changed by it."""

    def hijacked(self, attack: ActiveAttack) -> Any:
        """A run in which ``attack.client_gradient`` replaces the gradient the client receives."""


Build = Callable[[AttackerView], "Attack"]


class Attack(ABC):
    """Base class of every attack; subclass one of the three contracts below.

    Subclasses declare ``requires`` (capabilities of the view), ``scorings`` (how their
    reconstructions are scored), ``knobs`` (their settings, ``budget`` always among them) and the
    facts every registered attack declares on its class (:data:`FACTS`, checked by
    :func:`undeclared_facts`): ``kinds`` (the data kinds it applies to: ``image``, ``tabular``),
    ``headline_metric`` (the one number its leaderboard cells and convergence test quote) and
    ``configs`` (its configuration per profile, one dataclass each; empty for an attack without
    settings). Its ``budget_table`` holds the budget it runs at on each setting where its convergence
    was measured, and the results that support it (:mod:`attacks.budget_table`; none by default, as
    for a submitted attack nobody has measured yet). An attack that trains a
    stand-in for the client's head names it in ``substitute_network`` (a key of :meth:`networks`: a module from images to cut-shaped maps,
    ready in evaluation mode after :meth:`run`); the bench scores how well it transfers to the
    victim's head with ground truth the attack never sees (:mod:`bench.run.transfer`). They
    implement :meth:`run`. Its display name is the reports' (the paper's name,
    :data:`bench.report.labels.ATTACK_LABELS`), which name attacks a results folder lacks without
    importing torch.

    Args:
        view: what the server holds.
        profile: name of the profile (``smoke``, ``cpu``, ``paper``) whose configuration applies.
        seed: the attacker's own seed.
        budget: multiplier on every iteration and epoch count of the profile's configuration.

    Raises:
        MissingCapabilityError: when the view lacks a required capability or has the wrong data kind.
    """

    threat_model: ClassVar[ThreatModel]
    requires: ClassVar[frozenset[Capability]] = frozenset()
    kinds: ClassVar[tuple[str, ...]]
    headline_metric: ClassVar[str]
    configs: ClassVar[Mapping[str, Any]]
    scorings: ClassVar[tuple[Scoring, ...]] = (Scoring.AS_RETURNED,)
    knobs: ClassVar[tuple[Knob, ...]] = (BUDGET,)
    substitute_network: ClassVar[str | None] = None
    budget_table: ClassVar[tuple[MeasuredBudget, ...]] = ()

    def __init__(self, *, view: AttackerView, profile: str, seed: int = 0, budget: float = 1.0) -> None:
        self.profile = profile
        self.seed = seed
        self.budget = BUDGET.check(budget)
        self.update_view(view)

    def update_view(self, view: AttackerView) -> None:
        """Hand the attack a (newer) view, e.g. the trained run's targets after co-training."""
        missing = sorted(c.value for c in self.requires - view.granted)
        if missing:
            raise MissingCapabilityError(f"{type(self).__name__} needs {', '.join(missing)}, which the view does not grant")
        if view.kind not in self.kinds:
            raise MissingCapabilityError(f"{type(self).__name__} applies to {'/'.join(self.kinds)} data, not {view.kind}")
        self.view = view

    @classmethod
    @abstractmethod
    def meet_victim(cls, runs: VictimRuns, build: Build) -> tuple[Any, Attack | None]:
        """The trained victim this attack is run against, and the attack if it was built on the way."""

    def networks(self) -> dict[str, nn.Module]:
        """The attacker's own networks as built for this view, by name (none for a network-free
        attack). One attacker serves every defense of a cut: the same classes and sizes whatever
        the defense (``tests/attacks/test_same_attacker.py`` checks it)."""
        return {}

    @abstractmethod
    def run(self) -> AttackOutput:
        """Carry out the attack on the view's targets."""


class PassiveAttack(Attack):
    """An attack on what the server stored after an honest training run."""

    threat_model = ThreatModel.PASSIVE

    @classmethod
    def meet_victim(cls, runs: VictimRuns, build: Build) -> tuple[Any, Attack | None]:
        return runs.honest(), None


class CotrainAttack(Attack):
    """An attack that watches every training step (built before the run, from a view without
    targets) and receives the trained run's view through :meth:`update_view` before :meth:`run`."""

    threat_model = ThreatModel.COTRAIN

    @abstractmethod
    def on_step(self, step_view: StepView) -> None:
        """Called after both parties stepped, in a forked RNG state."""

    def progress_state(self) -> dict[str, Any]:
        """Everything the attack has learned and drawn so far, for a snapshot of a watched run
        (:mod:`bench.run.progress`): every attribute but the view, which a resumed run rebuilds
        the same. Pickled as one object, so optimizers keep pointing at the networks they step."""
        return {name: value for name, value in vars(self).items() if name != "view"}

    def resume_from(self, state: dict[str, Any]) -> None:
        """Take back a :meth:`progress_state`; the view stays this attack's."""
        vars(self).update(state)

    @classmethod
    def meet_victim(cls, runs: VictimRuns, build: Build) -> tuple[Any, Attack | None]:
        attack = build(runs.view_before_training())
        return runs.watched(attack), attack


class ActiveAttack(Attack):
    """A malicious server: chooses the gradient the client receives at the cut."""

    threat_model = ThreatModel.ACTIVE

    @property
    def hijacked_epochs(self) -> int | None:
        """Length of the hijacked run in victim epochs (``None``: the profile's)."""
        return None

    @property
    def hijacked_client_lr(self) -> float | None:
        """The client's learning rate in the hijacked run (``None``: the profile's)."""
        return None

    @abstractmethod
    def client_gradient(self, step_view: StepView) -> Tensor:
        """The gradient to send instead of ``step_view.grad``; same shape as the payload's values."""

    @classmethod
    def meet_victim(cls, runs: VictimRuns, build: Build) -> tuple[Any, Attack | None]:
        attack = build(runs.view_before_training())
        return runs.hijacked(attack), attack


def config_for(attack: str, configs: Mapping[str, C], profile: str, override: C | None = None) -> C:
    """The attack's configuration for ``profile`` (or ``override`` when given).

    Raises:
        ValueError: for a profile the attack has no configuration for.
    """
    if override is not None:
        return override
    if profile not in configs:
        raise ValueError(f"{attack}: unknown profile '{profile}' (known: {', '.join(configs)})")
    return configs[profile]


def scale_counts(config: C, multiplier: float, *counts: str) -> C:
    """``config`` (a dataclass) with each named count times ``multiplier``, rounded, at least 1;
    ``config`` itself at a multiplier of 1."""
    if multiplier == 1:
        return config
    return dataclasses.replace(config, **{n: max(1, round(getattr(config, n) * multiplier)) for n in counts})


FACTS = ("kinds", "headline_metric", "configs")  # what every registered attack declares on its class


def undeclared_facts(cls: type[Attack]) -> list[str]:
    """The :data:`FACTS` that ``cls`` does not declare (on itself or a base class)."""
    return [name for name in FACTS if not hasattr(cls, name)]


ATTACKS: Registry[type[Attack]] = Registry("attack")
