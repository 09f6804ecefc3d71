"""Attacks on the cut layer; importing this package registers every built-in attack."""
from attacks import decoders, fora, fsha, har_probes, prior, projection_decoders, sdar, unsplit  # noqa: F401  (registration)
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
