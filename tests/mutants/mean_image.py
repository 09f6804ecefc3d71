"""Mutant: every image attack learns nothing and returns the mean auxiliary (else member) image, or
a constant grey image where it holds no image at all (UnSplit).

A co-training attack ignores every step it watches and an active one sends the honest gradient, so
the mutant is cheap; the quality tests that compare an attack with the mean-image floor must fail.
"""
from __future__ import annotations

import pytest

from tests.mutants.expect_failure import register

PARALLEL = False  # under this mutant the targets train no attacker: workers cost more to start than they save
TARGETS = (
    "tests/attacks/test_decoders.py::test_reference_decoder_on_an_identity_head_reconstructs_near_perfectly",
    "tests/attacks/test_decoders.py::test_under_huge_dp_noise_the_decoder_falls_to_the_mean_image",
    "tests/attacks/test_decoders.py::test_each_decoder_beats_the_mean_image_on_raw_payloads",
    "tests/attacks/test_decoders.py::test_bfloat16_autocast_is_an_option_that_still_reconstructs",
    "tests/attacks/test_sdar.py::test_with_a_simulator_matched_to_the_client_it_beats_the_mean_image",
    "tests/attacks/test_fora.py::test_reconstructions_beat_the_mean_image",
    "tests/attacks/test_fsha.py::test_a_client_hijacked_onto_the_pilot_is_decoded_beating_the_mean_image",
    "tests/attacks/test_unsplit.py::test_identity_head_beats_the_constant_start",
    "tests/attacks/test_linear_probe.py::test_an_invertible_linear_payload_is_recovered_exactly",
    "tests/attacks/test_linear_probe.py::test_on_a_raw_victim_it_beats_the_mean_image",
)


def _mean_image_run(self):
    import torch

    from attacks import AttackOutput
    from defenses.payload import values_of

    v = self.view
    held = [o.inputs for o in (v.aux, v.members) if o is not None and o.inputs is not None]
    mean = held[0].mean(0, keepdim=True) if held else torch.full((1, *v.input_shape), 0.5)
    n = len(values_of(v.targets.payloads))
    return AttackOutput(reconstructions=mean.expand(n, *mean.shape[1:]).clone(), scores={})


def _watch_nothing(self, step_view) -> None:
    return None


def _honest_gradient(self, step_view):
    return step_view.grad


def pytest_configure(config: pytest.Config) -> None:
    from attacks import ATTACKS, ActiveAttack, CotrainAttack  # imported here: the runner reads TARGETS without torch

    for name in ATTACKS.names():
        cls = ATTACKS.get(name)
        if "image" not in cls.kinds or name == "prior":  # the prior already is the mean image
            continue
        cls.run = _mean_image_run
        if issubclass(cls, CotrainAttack):
            cls.on_step = _watch_nothing
        if issubclass(cls, ActiveAttack):
            cls.client_gradient = _honest_gradient
    register(config, "mean-image")
