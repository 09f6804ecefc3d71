"""Every registered attack declares its facts on its class: the data kinds it reads, its headline
metric and its configuration per profile (``attacks.base.FACTS``)."""
import dataclasses

import pytest

from attacks import ATTACKS, AttackOutput, PassiveAttack
from attacks.base import FACTS, undeclared_facts
from attacks.budget_table import MeasuredBudget
from bench.profiles import PROFILES
from bench.report.labels import privacy_direction

DATA_KINDS = {"image", "tabular"}


@pytest.mark.parametrize("name", ATTACKS.names())
def test_every_registered_attack_declares_its_facts(name):
    cls = ATTACKS.get(name)
    assert undeclared_facts(cls) == [], name
    assert cls.kinds and set(cls.kinds) <= DATA_KINDS, name
    assert privacy_direction(cls.headline_metric), f"{name}: headline {cls.headline_metric} has no privacy direction"
    assert set(cls.configs) <= set(PROFILES), name
    assert all(dataclasses.is_dataclass(c) and not isinstance(c, type) for c in cls.configs.values()), name
    assert all(isinstance(entry, MeasuredBudget) for entry in cls.budget_table), name
    assert not cls.budget_table or cls.configs, f"{name}: a closed form has no budget to measure"
    settings = [(e.profile, e.dataset, e.victim, e.cut) for e in cls.budget_table]
    assert len(settings) == len(set(settings)), f"{name}: one entry per setting"


def test_every_configured_attack_covers_the_same_profiles():
    """A table is empty only for an attack without settings (the ``prior`` floor); any other covers
    every profile an attack is configured for, so no profile leaves one attack out."""
    tables = {name: set(ATTACKS.get(name).configs) for name in ATTACKS.names()}
    covered = set().union(*tables.values())
    assert covered >= {"smoke", "cpu", "paper"}
    assert {name: t for name, t in tables.items() if t and t != covered} == {}
    assert tables["prior"] == set()


def test_a_class_missing_a_fact_is_caught():
    class Incomplete(PassiveAttack):
        kinds = ("image",)
        headline_metric = "ssim"

        def run(self):
            return AttackOutput()

    assert undeclared_facts(Incomplete) == ["configs"]
    assert Incomplete.budget_table == ()  # nothing measured: the base's default
    assert undeclared_facts(PassiveAttack) == list(FACTS)
