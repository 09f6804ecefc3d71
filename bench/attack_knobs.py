"""The knobs every attack shares, declared without torch so that reports can read their defaults.

``budget`` scales an attack's iterations and epochs; ``precision`` runs a supervised decoder under
bfloat16 autocast. Cells at a value other than the default study the attack (a convergence check at
4× the budget, a bfloat16 run): :func:`bench.report.aggregate.at_default_settings` keeps them out
of a table's attack columns and the claims, which show one attacker per configuration.
"""
from __future__ import annotations

from bench.knobs import Knob

BUDGET = Knob(
    "budget", float, default=1.0, minimum=0.0, exclusive_minimum=True, maximum=1000.0,
    help="multiplier on every iteration and epoch count of the attack (1 = the profile's budget)",
)
PRECISION = Knob("precision", str, default="float32", choices=("float32", "bfloat16"),
                 help="the decoder's forward and backward under bfloat16 autocast (weights and Adam stay float32)")
SHARED_ATTACK_KNOBS = (BUDGET, PRECISION)
