"""One attacker per cut: every attack builds the same networks, of the same sizes, whatever the defense."""
import pytest
import torch

from attacks import ATTACKS
from attacks.decoder_nets import parameter_count
from attacks.projection_decoders import _ProjectionAwareDecoder
from attacks.view import AttackerClientPath
from bench.data import DATASETS
from bench.data.splits import carve
from bench.profiles import get_profile
from bench.run.attacker_views import build_view
from bench.run.cell import Cell
from bench.run.training import build_model
from defenses import DEFENSES
from tests.defenses.knob_values import smoke_knobs

# Every registered defense (test doubles aside) and the DP compositions, at the shared test knobs.
DEFENSES = {name: smoke_knobs(name) for name in DEFENSES.names() + ["raw+dp", "lightsplit-f+dp"]
            if not name.startswith(("broken", "random"))}
IMAGE_ATTACKS = [name for name in ATTACKS.names() if "image" in ATTACKS.get(name).kinds and not name.startswith("test-")]


@pytest.fixture(scope="module")
def views(tmp_path_factory):
    """Untrained victims suffice: the attacker's networks depend on shapes, never on weights."""
    data = carve(DATASETS.get("digits")(tmp_path_factory.mktemp("d")), get_profile("smoke"))
    every = frozenset().union(*(ATTACKS.get(a).requires for a in IMAGE_ATTACKS))
    out = {}
    for defense, knobs in DEFENSES.items():
        cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense=defense, defense_knobs=knobs,
                    profile="smoke", seed=0)
        model = build_model(cell, data)
        out[defense], _ = build_view(cell=cell, model=model, data=data, client_indices=[torch.arange(len(data.members))],
                                     granted=every, n_targets=16)
    return out


def signature(attack) -> dict[str, tuple[tuple[str, ...], int]]:
    """Module classes and parameter count of each network; a simulated client path (SDAR's ``e``,
    FORA's substitute) by its head, since it carries the attacker's copy of the defense by design."""
    nets = {name: net.head if isinstance(net, AttackerClientPath) else net for name, net in attack.networks().items()}
    return {name: (tuple(type(m).__name__ for m in net.modules()), parameter_count(net)) for name, net in nets.items()}


@pytest.mark.parametrize("attack", IMAGE_ATTACKS)
def test_every_defense_of_a_cut_faces_the_same_attacker(views, attack):
    cls = ATTACKS.get(attack)
    signatures = {defense: signature(cls(view=view, profile="smoke", seed=0)) for defense, view in views.items()}
    reference = signatures["raw"]
    for defense, sig in signatures.items():
        assert sig.keys() == reference.keys(), defense
        for name, (classes, count) in sig.items():
            assert classes == reference[name][0], (defense, name)
            if issubclass(cls, _ProjectionAwareDecoder):  # input widths differ by defense; sizes matched
                assert abs(count - reference[name][1]) <= 0.01 * reference[name][1], (defense, name)
            else:
                assert count == reference[name][1], (defense, name, count, reference[name][1])


def test_the_attacks_with_networks_declare_them():
    # UnSplit's only network is its clone of the client path; the gradient scorings and the linear
    # probe are closed forms.
    view_free = {"unsplit", "prior", "label-norm", "label-direction", "linear-probe"}
    assert {a for a in IMAGE_ATTACKS if a not in view_free} <= {
        a for a in IMAGE_ATTACKS if ATTACKS.get(a).networks is not ATTACKS.get("prior").networks
    }
