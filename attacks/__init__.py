"""Attacks on the cut layer; importing this package registers every built-in attack."""
from attacks import decoders, fora, fsha, har_probes, projection_decoders, sdar, unsplit  # noqa: F401  (registration)
from attacks.base import ATTACKS, Attack, AttackOutput, MissingCapabilityError, ThreatModel
from attacks.view import AttackerView, Capability, Observation

__all__ = [
    "ATTACKS",
    "Attack",
    "AttackOutput",
    "AttackerView",
    "Capability",
    "MissingCapabilityError",
    "Observation",
    "ThreatModel",
]
