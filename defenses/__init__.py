"""Cut-layer defenses; importing this package imports every module in it, and so registers every
built-in defense and payload transform (each module registers its own with a decorator)."""
import importlib
import pkgutil

from defenses.base import DEFENSES, PAYLOAD_TRANSFORMS, Defense, DefenseConfigError, PayloadTransform
from defenses.compose import build_defense, knobs_of, split_name
from defenses.wcc import within_class_scatter

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

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
