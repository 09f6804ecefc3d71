"""Mutant: every defense sends a payload of zeros (a sparse one with its positions zeroed too).

Nothing about the input crosses the cut, so no attack can beat the mean-image floor and no probe
can recover a feature or a subject; every quality test that reads an attack on a defended (or raw)
victim must fail. Not targets: the identity-head tests, which build their payloads without a
defense, and the decoders that also read the cut gradient (``decoder-z-grad``, ``decoder-fused``):
the gradient the server sends back still depends on the label, and with it alone they reconstruct
near the class means, which beats the mean image (seen: 0.63-0.68 of the floor's MSE, under the
test's 0.7 bar), so a zero payload does not make them fail.
"""
from __future__ import annotations

import pytest

PARALLEL = True  # the attacks train in full against the zero payloads
TARGETS = (
    "tests/attacks/test_decoders.py::test_under_huge_dp_noise_the_decoder_falls_to_the_mean_image",
    *(f"tests/attacks/test_decoders.py::test_each_decoder_beats_the_mean_image_on_raw_payloads[{attack}]"
      for attack in ("decoder", "decoder-z", "decoder-z-lift")),
    "tests/attacks/test_sdar.py::test_with_a_simulator_matched_to_the_client_it_beats_the_mean_image",
    "tests/attacks/test_fora.py::test_reconstructions_beat_the_mean_image",
    "tests/attacks/test_fsha.py::test_a_client_hijacked_onto_the_pilot_is_decoded_beating_the_mean_image",
    "tests/attacks/test_har_probes.py::test_reconstruction_recovers_features_on_raw",
    "tests/attacks/test_har_probes.py::test_reidentification_beats_chance_on_raw",
    "tests/attacks/test_linear_probe.py::test_on_a_raw_victim_it_beats_the_mean_image",
)


def _zeroed(encode):
    from defenses.payload import SparsePayload

    def encode_zeros(self, z):
        payload = encode(self, z)
        if isinstance(payload, SparsePayload):
            return SparsePayload(payload.values * 0, payload.indices * 0, payload.dense_numel)
        return payload * 0  # keeps the graph: the client still gets a (zero) gradient

    return encode_zeros


def _defense_classes() -> set[type]:
    import defenses  # noqa: F401  (registers every defense; imported here: the runner reads TARGETS without torch)
    from defenses.base import Defense

    found, todo = set(), [Defense]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    return found


def pytest_configure(config: pytest.Config) -> None:
    from tests.mutants.expect_failure import register

    for cls in _defense_classes():
        if "encode" in vars(cls):  # wrap each own encode once; composites call their base's, already zeroed
            cls.encode = _zeroed(vars(cls)["encode"])
    register(config, "zero-payload")
