"""pytest plugin (a mutation check, not collected as tests): every image attack's run() returns the mean
aux (else member) image for each target; its quality tests must then fail::

    PYTHONPATH=tests python -m pytest -p mean_image_mutant tests/attacks -k "beat or beats or identity_head"
"""
import attacks  # noqa: F401
from attacks import ATTACKS
from attacks.base import AttackOutput
from defenses.payload import values_of


def _mean_image_run(self):
    v = self.view
    src = v.aux.inputs if v.aux is not None and v.aux.inputs is not None else v.members.inputs
    n = len(values_of(v.targets.payloads))
    return AttackOutput(reconstructions=src.mean(0, keepdim=True).expand(n, *src.shape[1:]).clone(), scores={})


for name in ATTACKS.names():
    cls = ATTACKS.get(name)
    if "image" in cls.kinds and name != "prior":
        cls.run = _mean_image_run
