"""Every registered victim at every cut: shapes, composition, disjoint parts, errors, determinism."""
from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
import torch
from torch import nn

from bench.data import DATASETS
from victims import VICTIMS, SplitParts, Victim, default_victim

NUM_CLASSES = 7
BATCH = 2

# Cut shapes for each victim's default input, written out independently of the modules' own tables.
EXPECTED_CUTS = {
    "mnistnet": {"split-2": (8, 12, 12), "split-4": (16, 8, 8)},
    "simplecnn": {"l1h": (32, 14, 14), "l2h": (64, 7, 7)},
    "micronnet": {"l1h": (29, 16, 16), "l2h": (59, 8, 8)},
    "resnet18": {"l1h": (64, 8, 8), "l2h": (64, 8, 8)},
    "resnet50": {"l1h": (64, 8, 8)},
    "mobilenet": {"l1": (32, 16, 16), "l2": (64, 16, 16), "l3": (128, 8, 8)},
    "har-mlp": {"d256": (256,)},
}
EXPECTED_D = {
    ("mnistnet", "split-2"): 1152,
    ("mnistnet", "split-4"): 1024,
    ("resnet18", "l1h"): 4096,
    ("resnet18", "l2h"): 4096,
    ("resnet50", "l1h"): 4096,
    ("mobilenet", "l2"): 16384,
    ("har-mlp", "d256"): 256,
}
# Victims a grid must name: the default of no dataset.
NAMED_ONLY = {"mobilenet"}
# Image and tabular victims; the per-token language models have their own tests (test_gpt2.py).
VICTIM_CUTS = [(name, cut) for name in VICTIMS.names() if not VICTIMS.get(name).per_token for cut in VICTIMS.get(name).cuts]


@pytest.fixture(autouse=True, scope="module")
def _one_thread() -> Iterator[None]:
    """Run on one thread: these tensors are tiny, and on a busy machine thread sync dominates."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _build(name: str, cut: str) -> tuple[Victim, SplitParts]:
    victim = VICTIMS.get(name)()
    return victim, victim.build(cut=cut, num_classes=NUM_CLASSES, input_shape=victim.input_shape)


def test_registry_holds_every_builtin_victim() -> None:
    assert set(VICTIMS.names()) >= set(EXPECTED_CUTS)


@pytest.mark.parametrize("name", sorted(EXPECTED_CUTS))
def test_class_attributes(name: str) -> None:
    victim_cls = VICTIMS.get(name)
    assert issubclass(victim_cls, Victim)
    assert victim_cls.cuts == EXPECTED_CUTS[name]
    assert victim_cls.default_cut in victim_cls.cuts
    assert bool(victim_cls.datasets) == (name not in NAMED_ONLY)
    assert all(isinstance(n, int) for shape in victim_cls.cuts.values() for n in shape)


def test_each_dataset_is_claimed_by_exactly_one_victim_its_default() -> None:
    claims = {dataset: [name for name in VICTIMS.names() if dataset in VICTIMS.get(name).datasets] for dataset in DATASETS.names()}
    assert {dataset: names for dataset, names in claims.items() if len(names) != 1} == {}
    # the defaults every stored cell was made with
    assert {dataset: default_victim(dataset) for dataset in DATASETS.names()} == {
        "mnist": "mnistnet", "fashion-mnist": "simplecnn", "digits": "mnistnet", "cifar10": "resnet18",
        "cifar100": "resnet18", "cifar10-jpeg": "simplecnn", "gtsrb": "micronnet", "imagenet": "resnet50",
        "har": "har-mlp", "hapt": "har-mlp", "wikitext-2": "gpt2", "wikitext-103": "gpt2",
    }


def test_a_dataset_claimed_by_no_victim_or_by_two_has_no_default(monkeypatch) -> None:
    with pytest.raises(ValueError, match="no default victim for dataset 'unclaimed' \\(no registered victim declares it\\)"):
        default_victim("unclaimed")
    twin = type("Twin", (VICTIMS.get("mnistnet"),), {"datasets": ("mnist",)})
    monkeypatch.setitem(VICTIMS._items, "twin", twin)
    with pytest.raises(ValueError, match="victims mnistnet, twin all declare it"):
        default_victim("mnist")


@pytest.mark.parametrize(("name", "cut"), VICTIM_CUTS)
def test_parts_compose_to_logits(name: str, cut: str) -> None:
    torch.manual_seed(0)
    victim, parts = _build(name, cut)
    x = torch.randn(BATCH, *victim.input_shape)

    with torch.no_grad():
        z = parts.head(x)
        logits = parts.tail(parts.backbone(z))
    assert tuple(z.shape[1:]) == parts.cut_shape == victim.cuts[cut]
    assert logits.shape == (BATCH, NUM_CLASSES)
    assert torch.isfinite(logits).all()


@pytest.mark.parametrize("name", sorted(EXPECTED_CUTS))
def test_every_parameter_gets_a_gradient(name: str) -> None:
    victim, parts = _build(name, VICTIMS.get(name).default_cut)
    x = torch.randn(BATCH, *victim.input_shape)
    parts.tail(parts.backbone(parts.head(x))).sum().backward()
    for part in (parts.head, parts.backbone, parts.tail):
        assert all(p.grad is not None for p in part.parameters())


@pytest.mark.parametrize(("name", "cut"), sorted(EXPECTED_D))
def test_cut_dimension(name: str, cut: str) -> None:
    assert math.prod(VICTIMS.get(name).cuts[cut]) == EXPECTED_D[(name, cut)]


@pytest.mark.parametrize(("name", "cut"), VICTIM_CUTS)
def test_parts_share_no_parameters(name: str, cut: str) -> None:
    _, parts = _build(name, cut)
    ids = [{id(p) for p in part.parameters()} for part in (parts.head, parts.backbone, parts.tail)]
    assert all(ids), "every part has parameters"
    assert not ids[0] & ids[1] and not ids[0] & ids[2] and not ids[1] & ids[2]


@pytest.mark.parametrize("name", sorted(EXPECTED_CUTS))
def test_unknown_cut_raises(name: str) -> None:
    victim = VICTIMS.get(name)()
    with pytest.raises(ValueError, match="no-such-cut"):
        victim.build(cut="no-such-cut", num_classes=NUM_CLASSES, input_shape=victim.input_shape)


@pytest.mark.parametrize("name", sorted(EXPECTED_CUTS))
def test_wrong_input_rank_raises(name: str) -> None:
    victim = VICTIMS.get(name)()
    with pytest.raises(ValueError):  # no victim takes a 2-D input
        victim.build(cut=victim.default_cut, num_classes=NUM_CLASSES, input_shape=(5, 5))


@pytest.mark.parametrize(("name", "cut"), VICTIM_CUTS)
def test_same_seed_same_weights(name: str, cut: str) -> None:
    def state() -> list[dict[str, torch.Tensor]]:
        torch.manual_seed(0)
        _, parts = _build(name, cut)
        return [part.state_dict() for part in (parts.head, parts.backbone, parts.tail)]

    first, second = state(), state()
    for a, b in zip(first, second):
        assert a.keys() == b.keys()
        assert all(torch.equal(a[k], b[k]) for k in a)


def test_cut_shape_follows_input_size() -> None:
    victim = VICTIMS.get("resnet18")()
    parts = victim.build(cut="l2h", num_classes=NUM_CLASSES, input_shape=(3, 64, 64))
    assert parts.cut_shape == (64, 16, 16)
    assert tuple(parts.head(torch.randn(BATCH, 3, 64, 64)).shape[1:]) == parts.cut_shape


def test_mnistnet_cuts_share_weights_for_one_seed() -> None:
    def weights(cut: str) -> dict[str, torch.Tensor]:
        torch.manual_seed(0)
        _, parts = _build("mnistnet", cut)
        model = nn.ModuleDict({"head": parts.head, "backbone": parts.backbone, "tail": parts.tail})
        return {k.split(".", 1)[1]: v for k, v in model.state_dict().items()}

    a, b = weights("split-2"), weights("split-4")
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_resnet50_rejects_small_or_grey_inputs() -> None:
    victim = VICTIMS.get("resnet50")()
    for bad in [(3, 16, 16), (1, 64, 64)]:
        with pytest.raises(ValueError):
            victim.build(cut="l1h", num_classes=NUM_CLASSES, input_shape=bad)
