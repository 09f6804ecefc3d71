"""Knob values the shared tests give every registered defense: the common knobs at small sizes (the
client's proxy decoder of DISCO and adversarial learning too: its released 64 channels × 4 blocks
costs about 1.4 s a step on the CPU), and any other knob (a field defense's weight) at its default,
or the first value of its sweep."""
from __future__ import annotations

from defenses import knobs_of

COMMON = {"cr": 8.0, "sigma": 0.02, "tile": 2, "width": 32, "proxy_width": 8, "proxy_blocks": 1}


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
