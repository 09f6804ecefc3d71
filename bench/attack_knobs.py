"""The knobs that tune an attacker, declared without torch so that reports can read their defaults.

``budget`` scales an attack's iterations and epochs; ``precision`` runs a supervised decoder under
bfloat16 autocast; ``lambda1_scale`` scales SDAR's simulator adversarial weight; ``moment_tie`` ties
SDAR's simulator, or FORA's substitute, to the observed payloads' per-element mean; ``substitute``
picks FORA's substitute form. Cells at a value other than the default
study the attack (a convergence check at 4× the budget, a bfloat16 run, another SDAR weight, a tied
simulator or substitute): :func:`bench.report.aggregate.at_default_settings` keeps them out of a table's
attack columns and the claims, which show one attacker per configuration; the worst case reads them.
"""
from __future__ import annotations

from bench.knobs import Knob

BUDGET = Knob(
    "budget", float, default=1.0, minimum=0.0, exclusive_minimum=True, maximum=1000.0,
    help="multiplier on every iteration and epoch count of the attack (1 = the profile's budget)",
)
MEASURED = "measured"  # a budget given so resolves to the attack's budget table's (attacks/budget_table.py)
PRECISION = Knob("precision", str, default="float32", choices=("float32", "bfloat16"),
                 help="the decoder's forward and backward under bfloat16 autocast (weights and Adam stay float32)")
LAMBDA1_SCALE = Knob(
    "lambda1_scale", float, default=1.0, minimum=0.0, exclusive_minimum=True, maximum=25.0,
    help="SDAR: multiplier on the profile's simulator adversarial weight lambda1 (the product must stay <= 1)",
)
MOMENT_TIE = Knob(
    "moment_tie", float, default=0.0, minimum=0.0, maximum=100.0,
    help="SDAR, FORA: weight of the simulator's (substitute's) standardised gap to the observed payloads' mean (0 = as published)",
)
SUBSTITUTE = Knob(
    "substitute", str, default="profile", choices=("profile", "conv", "vgg"),
    help="FORA: the substitute head's form (profile: the profile's, conv at smoke and cpu, the released vgg at paper)",
)
SHARED_ATTACK_KNOBS = (BUDGET, PRECISION)
ATTACKER_TUNING_KNOBS = (*SHARED_ATTACK_KNOBS, LAMBDA1_SCALE, MOMENT_TIE, SUBSTITUTE)
