"""Knob values the shared tests give every registered defense: the common knobs at small sizes, and
any other knob (a field defense's weight) at its default, or the first value of its sweep."""
from __future__ import annotations

from defenses import knobs_of

COMMON = {"cr": 8.0, "sigma": 0.02, "tile": 2, "width": 32}


def smoke_knobs(defense: str, **overrides) -> dict:
    """``{knob: value}`` for every knob ``defense`` reads (``overrides`` first, then :data:`COMMON`)."""
    values = {**COMMON, **overrides}
    out = {}
    for knob in knobs_of(defense):
        if knob.name in values:
            out[knob.name] = values[knob.name]
        else:
            out[knob.name] = knob.default_values()[0]
    return out
