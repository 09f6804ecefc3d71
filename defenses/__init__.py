"""Cut-layer defenses; importing this package registers every built-in defense and transform."""
from defenses import dp, learned_1x1, lightsplit, raw, topk  # noqa: F401  (registration)
from defenses.base import DEFENSES, PAYLOAD_TRANSFORMS, Defense, DefenseConfigError, PayloadTransform
from defenses.compose import build_defense, knobs_of, split_name
from defenses.wcc import within_class_scatter

__all__ = [
    "DEFENSES",
    "PAYLOAD_TRANSFORMS",
    "Defense",
    "DefenseConfigError",
    "PayloadTransform",
    "build_defense",
    "knobs_of",
    "split_name",
    "within_class_scatter",
]
