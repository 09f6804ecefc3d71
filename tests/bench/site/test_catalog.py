"""The site's catalog reads what each attack class declares: its headline metric and configuration
per profile (one attribute name, ``configs``, for every attack)."""
import dataclasses

from attacks import ATTACKS
from bench.report.labels import attack_label
from bench.site.catalog import attack_info

PROFILES = ["smoke", "cpu", "paper"]


def test_every_configured_attack_page_shows_its_configuration_per_profile():
    for name in ATTACKS.names():
        cls = ATTACKS.get(name)
        info = attack_info(name, profiles=PROFILES)
        assert (info.label, info.headline_metric) == (attack_label(name), cls.headline_metric)
        assert info.configs == {p: dataclasses.asdict(cls.configs[p]) for p in PROFILES if p in cls.configs}


def test_unsplit_and_the_decoders_show_their_configuration_and_the_prior_none():
    unsplit = attack_info("unsplit", profiles=["cpu"])
    assert list(unsplit.configs) == ["cpu"] and unsplit.configs["cpu"]["outer_steps"] == 300
    assert unsplit.headline_metric == "masked_mse_minmax"
    assert attack_info("decoder-ref", profiles=PROFILES).configs["paper"]["width"] == 256  # declared on their base class
    assert attack_info("prior", profiles=PROFILES).configs == {}


def test_an_unregistered_attack_keeps_its_name_and_recorded_headline():
    info = attack_info("plugin-attack", profiles=PROFILES, recorded_headline="median_r2")
    assert (info.registered, info.label, info.headline_metric, info.configs) == (False, "plugin-attack", "median_r2", {})
