from bench.report.claims import HELD, NOT_HELD, NOT_TESTABLE, Claim, Selector, verify
from bench.run.cell import Cell
from bench.run.store import CellRecord, records_to_table

BASE = dict(dataset="mnist", victim="mnistnet", cut="split-2", profile="cpu")


def table(values):
    """values: {(defense, cr, seed): (ssim, diverged)}"""
    records = []
    for (defense, cr, seed), (ssim, diverged) in values.items():
        cell = Cell(defense=defense, defense_knobs={"cr": cr}, seed=seed, attack="sdar", **BASE)
        records.append(CellRecord(cell, "ok", {"ssim": ssim, "diverged": float(diverged)}))
    return records_to_table(records)


CLAIM = Claim("c", "Table III", "lsf below topk", "ssim", Selector("lightsplit-f", "sdar", 8.0), "<",
              Selector("topk", "sdar", 8.0), profiles=("cpu",))


def test_ordering_held_and_not_held_on_seed_means():
    held = table({("lightsplit-f", 8.0, 0): (0.3, 0), ("lightsplit-f", 8.0, 1): (0.5, 0),
                  ("topk", 8.0, 0): (0.6, 0), ("topk", 8.0, 1): (0.5, 0)})
    assert verify(held, "cpu", [CLAIM])[0].status == HELD  # 0.4 < 0.55
    not_held = table({("lightsplit-f", 8.0, 0): (0.7, 0), ("topk", 8.0, 0): (0.6, 0)})
    assert verify(not_held, "cpu", [CLAIM])[0].status == NOT_HELD


def test_diverged_runs_are_left_out_of_the_means():
    t = table({("lightsplit-f", 8.0, 0): (0.3, 0), ("lightsplit-f", 8.0, 1): (0.99, 1), ("topk", 8.0, 0): (0.5, 0)})
    verdict = verify(t, "cpu", [CLAIM])[0]
    assert verdict.status == HELD and "(n=1)" in verdict.detail


def test_missing_cells_or_other_profiles_are_not_testable():
    t = table({("lightsplit-f", 8.0, 0): (0.3, 0)})
    assert verify(t, "cpu", [CLAIM])[0].status == NOT_TESTABLE
    assert verify(t, "paper", [CLAIM]) == []


def test_value_claims_use_their_tolerance():
    claim = Claim("v", "Table X", "raw ssim", "ssim", Selector("topk", "sdar", 8.0), "≈", value=0.5, tolerance=0.05,
                  profiles=("cpu",))
    t = table({("topk", 8.0, 0): (0.54, 0)})
    assert verify(t, "cpu", [claim])[0].status == HELD
    t = table({("topk", 8.0, 0): (0.56, 0)})
    assert verify(t, "cpu", [claim])[0].status == NOT_HELD


def test_offset_claims_allow_the_stated_gain():
    claim = Claim("o", "Table XVI", "at most +0.03", "ssim", Selector("lightsplit-f", "sdar", 8.0), "<",
                  Selector("topk", "sdar", 8.0), offset=0.03, profiles=("cpu",))
    assert verify(table({("lightsplit-f", 8.0, 0): (0.52, 0), ("topk", 8.0, 0): (0.5, 0)}), "cpu", [claim])[0].status == HELD
    assert verify(table({("lightsplit-f", 8.0, 0): (0.54, 0), ("topk", 8.0, 0): (0.5, 0)}), "cpu", [claim])[0].status == NOT_HELD


def test_every_registered_claim_names_registered_defenses_and_attacks():
    """A typo in a selector would make a claim silently untestable forever."""
    from attacks import ATTACKS
    from bench.report.claims import CLAIMS
    from defenses import split_name

    for claim in CLAIMS:
        for selector in filter(None, (claim.left, claim.right)):
            split_name(selector.defense)  # raises on an unknown defense or transform
            assert selector.attack == "none" or selector.attack in ATTACKS.names(), claim.id
