"""Leakage measures that need no attack: what the trained client's encoder itself says about how much
of an input its payload gives away (distance correlation, a Gaussian-channel bound on the mutual
information, Fisher-information leakage). They read the client (its inputs and its encoder's
Jacobians): the benchmark's own white-box analysis, never an attacker's view.

:mod:`bench.leakage.names` (the measures' names and meanings) imports no torch, so reports can read it.
"""
