"""Attacks on the cut layer; importing this package registers every built-in attack."""
from attacks import (  # noqa: F401  (registration)
    decoders,
    fora,
    fsha,
    har_probes,
    label_direction,
    label_norm,
    linear_probe,
    model_completion,
    prior,
    projection_decoders,
    sdar,
    unsplit,
)
from attacks.base import (
    ATTACKS,
    BUDGET,
    ActiveAttack,
    Attack,
    AttackOutput,
    CotrainAttack,
    MissingCapabilityError,
    PassiveAttack,
    Scoring,
    ThreatModel,
)
from attacks.view import AttackerView, Capability, Observation, ServerHandle, StepView

__all__ = [
    "ATTACKS",
    "BUDGET",
    "ActiveAttack",
    "Attack",
    "AttackOutput",
    "AttackerView",
    "Capability",
    "CotrainAttack",
    "MissingCapabilityError",
    "Observation",
    "PassiveAttack",
    "Scoring",
    "ServerHandle",
    "StepView",
    "ThreatModel",
]
