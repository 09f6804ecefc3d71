from bench.report.claims import HELD, NOT_HELD, NOT_TESTABLE, WITHIN_NOISE, verify
from bench.report.paper_claims import Claim, Selector
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
    held = table({("lightsplit-f", 8.0, 0): (0.3, 0), ("lightsplit-f", 8.0, 1): (0.32, 0),
                  ("topk", 8.0, 0): (0.6, 0), ("topk", 8.0, 1): (0.58, 0)})
    assert verify(held, "cpu", [CLAIM])[0].status == HELD  # 0.31 < 0.59, far past the seeds' spread
    not_held = table({("lightsplit-f", 8.0, 0): (0.7, 0), ("topk", 8.0, 0): (0.6, 0)})
    assert verify(not_held, "cpu", [CLAIM])[0].status == NOT_HELD


def test_an_ordering_closer_than_its_noise_is_within_noise_either_way():
    # means 0.4 < 0.55, margin 0.15; 2·SE = 2·√(0.02/2 + 0.005/2) = 0.2236
    leaning_held = table({("lightsplit-f", 8.0, 0): (0.3, 0), ("lightsplit-f", 8.0, 1): (0.5, 0),
                          ("topk", 8.0, 0): (0.6, 0), ("topk", 8.0, 1): (0.5, 0)})
    verdict = verify(leaning_held, "cpu", [CLAIM])[0]
    assert verdict.status == WITHIN_NOISE and "lean held, by +0.1500 ≤ 2·SE 0.2236" in verdict.detail
    leaning_not = table({("lightsplit-f", 8.0, 0): (0.6, 0), ("lightsplit-f", 8.0, 1): (0.5, 0),
                         ("topk", 8.0, 0): (0.3, 0), ("topk", 8.0, 1): (0.5, 0)})
    verdict = verify(leaning_not, "cpu", [CLAIM])[0]
    assert verdict.status == WITHIN_NOISE and "lean not held, by -0.1500 ≤ 2·SE 0.2236" in verdict.detail


def test_diverged_runs_are_left_out_of_the_means():
    t = table({("lightsplit-f", 8.0, 0): (0.3, 0), ("lightsplit-f", 8.0, 1): (0.99, 1), ("topk", 8.0, 0): (0.5, 0)})
    verdict = verify(t, "cpu", [CLAIM])[0]
    assert verdict.status == HELD and "0.3000 (n=1, no CI)" in verdict.detail


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
    from bench.report.paper_claims import CLAIMS
    from defenses import split_name

    for claim in CLAIMS:
        for selector in filter(None, (claim.left, claim.right)):
            split_name(selector.defense)  # raises on an unknown defense or transform
            assert selector.attack == "none" or selector.attack in ATTACKS.names(), claim.id


def cells(attack: str, defense: str, cr: float | None, per_seed: dict[str, tuple[float, ...]]) -> list[CellRecord]:
    """One record per seed of one configuration; ``per_seed`` maps each metric to its values by seed."""
    n = len(next(iter(per_seed.values())))
    return [CellRecord(Cell(defense=defense, defense_knobs={} if cr is None else {"cr": cr}, seed=s, attack=attack, **BASE),
                       "ok", {m: v[s] for m, v in per_seed.items()}) for s in range(n)]


def test_privacy_gain_side_is_the_side_the_claim_calls_more_private():
    from bench.report.claims import privacy_gain_side
    from bench.report.paper_claims import CLAIMS

    images = {"sdar", "unsplit", "decoder-z", "decoder-z-lift"}
    assert privacy_gain_side(CLAIM, images) == CLAIM.left  # lightsplit-f < topk on SSIM
    claims = {c.id: c for c in CLAIMS}
    above = claims["sdar-ssim-topk32-above-lsf8"]  # topk 32 > lightsplit-f 8 on SSIM: the right side
    assert privacy_gain_side(above, images) == above.right
    unsplit = claims["unsplit-masked-mse-topk-above-raw-cr8"]  # topk > raw on masked MSE: the left side
    assert privacy_gain_side(unsplit, images) == unsplit.left
    assert privacy_gain_side(unsplit, images - {"unsplit"}) is None  # its rows do not record images
    for cid in ("utility-dp-keeps-96pct", "decoder-z-lift-gains-at-most-0.032-ssim", "sdar-raw-l4-ssim"):
        assert privacy_gain_side(claims[cid], images) is None  # utility, two attacks, a value


def test_an_attack_on_the_floor_measures_no_leakage():
    from bench.report.claims import NO_LEAKAGE

    base = [*cells("sdar", "lightsplit-f", 8.0, {"ssim": (0.20, 0.24)}), *cells("sdar", "topk", 8.0, {"ssim": (0.60, 0.64)})]
    # the prior under two defenses: per-seed means 0.21, 0.25 (mean 0.23): SDAR's 0.22 is within 2·SE = 0.0566
    prior = [*cells("prior", "raw", None, {"ssim": (0.20, 0.24)}), *cells("prior", "topk", 8.0, {"ssim": (0.22, 0.26)})]
    verdict = verify(records_to_table(base + prior), "cpu", [CLAIM])[0]
    assert verdict.status == NO_LEAKAGE
    assert verdict.detail.startswith("ssim: lightsplit-f CR 8 / sdar 0.2200 (n=2) vs the floor (prior ssim) 0.2300 (n=2)")
    assert "< topk CR 8 / sdar 0.6200 ±" in verdict.detail and verdict.detail.endswith("(n=2)")
    assert verify(records_to_table(base), "cpu", [CLAIM])[0].status == HELD  # no prior cells: no floor check
    # a floor well below SDAR's 0.22 (0.05 ± 0.02): the attack leaks, the ordering decides
    low = [*cells("prior", "raw", None, {"ssim": (0.04, 0.06)})]
    assert verify(records_to_table(base + low), "cpu", [CLAIM])[0].status == HELD
    # worse than the floor, one seed each (no spread): still no leakage measured
    one = [*cells("sdar", "lightsplit-f", 8.0, {"ssim": (0.10,)}), *cells("sdar", "topk", 8.0, {"ssim": (0.6,)}),
           *cells("prior", "raw", None, {"ssim": (0.12,)})]
    assert verify(records_to_table(one), "cpu", [CLAIM])[0].status == NO_LEAKAGE
    # a prior of another cut is not this victim's floor
    other = [CellRecord(Cell(defense="raw", seed=0, attack="prior", **{**BASE, "cut": "split-4"}), "ok", {"ssim": 0.22})]
    assert verify(records_to_table(base + other), "cpu", [CLAIM])[0].status == HELD


def test_a_min_max_claim_is_floored_by_the_priors_as_returned_metric():
    from bench.report.claims import NO_LEAKAGE

    claim = Claim("m", "Table III", "lsf raises min-max masked MSE", "masked_mse_minmax",
                  Selector("lightsplit-f", "unsplit", 8.0), ">", Selector("raw", "unsplit"), profiles=("cpu",))
    base = [*cells("unsplit", "lightsplit-f", 8.0, {"masked_mse_minmax": (0.50, 0.52)}),
            *cells("unsplit", "raw", None, {"masked_mse_minmax": (0.20, 0.22)})]
    at_floor = cells("prior", "raw", None, {"masked_mse": (0.50, 0.52), "masked_mse_minmax": (0.9, 0.9)})
    assert verify(records_to_table(base + at_floor), "cpu", [claim])[0].status == NO_LEAKAGE
    above = cells("prior", "raw", None, {"masked_mse": (0.9, 0.9), "masked_mse_minmax": (0.50, 0.52)})
    assert verify(records_to_table(base + above), "cpu", [claim])[0].status == HELD


def test_a_cr_the_defense_does_not_reach_is_not_testable():
    claim = Claim("l", "Table XIII", "lsf below learned 1x1 at 16", "ssim", Selector("lightsplit-f", "decoder-ref", 16.0),
                  "<", Selector("learned-1x1", "decoder-ref", 16.0), profiles=("cpu",))
    lsf = cells("decoder-ref", "lightsplit-f", 16.0, {"ssim": (0.5,), "realized_cr": (16.0,)})
    capped = cells("decoder-ref", "learned-1x1", 16.0, {"ssim": (0.9,), "realized_cr": (8.0,)})
    verdict = verify(records_to_table(lsf + capped), "cpu", [claim])[0]
    assert verdict.status == NOT_TESTABLE
    assert verdict.detail == ("learned-1x1 CR 16 / decoder-ref: learned-1x1 reaches a realised CR of 8 on this victim, "
                              "not the nominal 16 the claim is made at")
    within = cells("decoder-ref", "learned-1x1", 16.0, {"ssim": (0.9,), "realized_cr": (15.9,)})  # 0.6% off: testable
    assert verify(records_to_table(lsf + within), "cpu", [claim])[0].status == HELD
    # the attack cells lack realized_cr: the victim's own cell (attack none) says it
    victim = cells("none", "learned-1x1", 16.0, {"accuracy": (0.9,), "realized_cr": (8.0,)})
    bare = cells("decoder-ref", "learned-1x1", 16.0, {"ssim": (0.9,)})
    assert verify(records_to_table(lsf + bare + victim), "cpu", [claim])[0].status == NOT_TESTABLE
    assert verify(records_to_table(lsf + bare), "cpu", [claim])[0].status == HELD  # nothing stored: no check


def test_the_verdicts_in_the_order_verify_counts_them():
    from bench.report.claims import NO_LEAKAGE, VERDICTS

    assert VERDICTS == (HELD, NOT_HELD, WITHIN_NOISE, NO_LEAKAGE, NOT_TESTABLE) == (
        "held", "not held", "within noise", "no leakage measured", "not testable")


def test_utility_claims_read_the_victim_stored_in_attack_cells():
    # No attack-free cell is stored: the victims' accuracy comes from their attack cells.
    records = [CellRecord(Cell(defense=d, defense_knobs=k, seed=0, attack="sdar", **BASE), "ok", {"accuracy": a})
               for d, k, a in (("raw", {}, 0.97), ("lightsplit-f", {"cr": 8.0}, 0.93))]
    claim = Claim("u", "Sect. I", "keeps 94%", "accuracy", Selector("lightsplit-f", cr=8.0), ">", Selector("raw"),
                  factor=0.94, profiles=("cpu",))
    verdict = verify(records_to_table(records), "cpu", [claim])[0]
    assert verdict.status == HELD and "0.9300 (n=1, no CI)" in verdict.detail and verdict.dataset == "mnist"


def test_each_dataset_gets_its_own_verdict_and_means_never_mix():
    import pandas as pd

    mnist = table({("lightsplit-f", 8.0, 0): (0.3, 0), ("topk", 8.0, 0): (0.5, 0)})
    # on CIFAR the ordering flips; pooled with MNIST the means would be 0.55 < 0.6, i.e. "held"
    cifar = table({("lightsplit-f", 8.0, 0): (0.8, 0), ("topk", 8.0, 0): (0.7, 0)}).assign(dataset="cifar10-jpeg")
    verdicts = verify(pd.concat([mnist, cifar], ignore_index=True), "cpu", [CLAIM])
    assert {(v.dataset, v.status) for v in verdicts} == {("mnist", HELD), ("cifar10-jpeg", NOT_HELD)}
    assert "0.8000 (n=1, no CI)" in next(v.detail for v in verdicts if v.dataset == "cifar10-jpeg")


def test_each_victim_and_cut_of_a_dataset_gets_its_own_verdict():
    import pandas as pd

    # Fashion-MNIST's UnSplit victim and its utility victim. Pooled, LightSplit-F's mean 0.65 against
    # 0.94 × raw's mean 0.80 = 0.752 would be one "not held"; apart, MnistNet holds (0.80 > 0.658).
    def victim_table(victim, cut, raw, lsf):
        return records_to_table([
            CellRecord(Cell(dataset="fashion-mnist", victim=victim, cut=cut, profile="cpu", defense=d,
                            defense_knobs=k, seed=0), "ok", {"accuracy": a})
            for d, k, a in (("raw", {}, raw), ("lightsplit-f", {"cr": 8.0}, lsf))])

    claim = Claim("u", "Sect. I", "keeps 94%", "accuracy", Selector("lightsplit-f", cr=8.0), ">", Selector("raw"),
                  factor=0.94, profiles=("cpu",))
    both = pd.concat([victim_table("mnistnet", "split-2", 0.70, 0.80), victim_table("simplecnn", "l2h", 0.90, 0.50)],
                     ignore_index=True)
    verdicts = verify(both, "cpu", [claim])
    assert {(v.dataset, v.status) for v in verdicts} == {
        ("fashion-mnist mnistnet/split-2", HELD), ("fashion-mnist simplecnn/l2h", NOT_HELD)}


def test_the_ci_is_the_95_percent_t_interval_over_seeds():
    values = {("lightsplit-f", 8.0, s): (v, 0) for s, v in enumerate((0.2, 0.3, 0.4))}
    detail = verify(table({**values, ("topk", 8.0, 0): (0.9, 0)}), "cpu", [CLAIM])[0].detail
    # mean 0.3, sd 0.1, t(0.975, 2) = 4.303: half-width 4.303 · 0.1 / √3 = 0.2484
    assert "lightsplit-f CR 8 / sdar 0.3000 ±0.2484 (n=3)" in detail


def test_a_claim_pinned_to_an_absent_dataset_is_not_testable():
    claim = Claim("v", "Table X", "value", "ssim", Selector("raw", "sdar", dataset="cifar10"), "≈", value=0.8,
                  tolerance=0.1, profiles=("cpu",))
    verdicts = verify(table({("raw", 8.0, 0): (0.8, 0)}), "cpu", [claim])
    assert [(v.dataset, v.status) for v in verdicts] == [("cifar10", NOT_TESTABLE)]


def test_a_run_whose_victim_did_not_learn_is_left_out_of_the_claim():
    records = [CellRecord(Cell(defense=d, defense_knobs={"cr": 8.0}, seed=s, attack="sdar", **BASE), "ok",
                          {"ssim": v, "accuracy": a, "chance_accuracy": 0.1, "test_samples": 2000.0})
               for d, s, v, a in (("lightsplit-f", 0, 0.3, 0.9), ("lightsplit-f", 1, 0.01, 0.1), ("topk", 0, 0.2, 0.9))]
    verdict = verify(records_to_table(records), "cpu", [CLAIM])[0]
    # with the collapsed victim's 0.01 the mean (0.155) would be below top-K's 0.2: "held" for the wrong reason
    assert verdict.status == NOT_HELD and "0.3000 (n=1, no CI)" in verdict.detail


def test_a_side_left_with_no_value_says_why():
    def verdict_for(rows):
        records = [CellRecord(Cell(defense=d, defense_knobs={"cr": 8.0}, seed=s, attack="sdar", **BASE), "ok",
                              {"ssim": v, "accuracy": a, "chance_accuracy": 0.1, "test_samples": 2000.0, "diverged": div})
                   for d, s, v, a, div in [("topk", 0, 0.2, 0.9, 0.0), *rows]]
        return verify(records_to_table(records), "cpu", [CLAIM])[0]

    unlearned = verdict_for([("lightsplit-f", 0, 0.3, 0.1, 0.0)])
    assert unlearned.status == NOT_TESTABLE and "victim did not learn" in unlearned.detail
    diverged = verdict_for([("lightsplit-f", 0, 0.3, 0.9, 1.0)])
    assert diverged.status == NOT_TESTABLE and diverged.detail.endswith("run diverged")
    empty = verdict_for([("lightsplit-f", 0, float("nan"), 0.9, 0.0)])
    assert empty.detail.startswith("no finite ssim in the stored lightsplit-f CR 8 / sdar cells")
    assert verdict_for([]).detail == "no stored lightsplit-f CR 8 / sdar cells"


def test_the_left_out_cells_of_a_whole_table_give_every_selection_the_values_it_computes_alone():
    """Oracle: verify computes the left-out cells once per table; each selection computing its own agrees."""
    from bench.report.claims import _values, left_out_cells

    records = [CellRecord(Cell(defense=d, defense_knobs={"cr": 8.0}, seed=s, attack="sdar", **BASE), "ok",
                          {"ssim": v, "accuracy": a, "chance_accuracy": 0.1, "test_samples": 2000.0, "diverged": div})
               for d, s, v, a, div in (("lightsplit-f", 0, 0.3, 0.9, 0.0), ("lightsplit-f", 1, 0.01, 0.1, 0.0),
                                       ("topk", 0, 0.2, 0.9, 1.0), ("topk", 1, 0.25, 0.9, 0.0))]
    whole = records_to_table(records)
    left_out = left_out_cells(whole)
    assert len(left_out) == 2  # the victim at chance and the diverged run
    for selector in (CLAIM.left, CLAIM.right):
        for metric in ("ssim", "accuracy"):
            alone = _values(whole, selector, metric)
            assert alone.equals(_values(whole, selector, metric, left_out=left_out)) and len(alone) == 1


def test_each_side_carries_its_attacks_seed_by_seed_convergence_at_the_budget_read():
    from bench.report.convergence import CONVERGED, NOT_CONVERGED, UNKNOWN

    def at(budget, defense, values):
        return [CellRecord(Cell(defense=defense, defense_knobs={"cr": 8.0}, seed=s, attack="sdar",
                                attack_knobs={"budget": budget}, **BASE), "ok", {"ssim": v}) for s, v in enumerate(values)]

    records = [*at(1.0, "lightsplit-f", (0.30, 0.32)), *at(4.0, "lightsplit-f", (0.30, 0.33)),
               *at(1.0, "topk", (0.60, 0.58)), *at(4.0, "topk", (0.60, 0.62))]  # top-K's seed 1 still gains 0.04
    (verdict,) = verify(records_to_table(records), "cpu", [CLAIM])
    assert verdict.status == HELD  # the verdict never changes the claim's status
    assert [(label, c.verdict) for label, c in verdict.convergence] == [
        ("lightsplit-f CR 8 / sdar", CONVERGED), ("topk CR 8 / sdar", NOT_CONVERGED)]
    assert not verdict.on_converged_attacks and verdict.convergence_note().startswith("rests on an attack not converged: ")
    flat = [r for r in records if r.cell.defense == "lightsplit-f" or r.cell.attack_params()["budget"] == 1.0]
    flat += at(4.0, "topk", (0.60, 0.59))
    (verdict,) = verify(records_to_table(flat), "cpu", [CLAIM])
    assert verdict.on_converged_attacks and verdict.convergence_note().startswith("attacks converged: ")
    (at_four,) = verify(records_to_table(records), "cpu", [CLAIM], attack_budget=4.0)  # the highest budget stored
    assert {c.verdict for _, c in at_four.convergence} == {UNKNOWN}


def test_a_claim_not_testable_or_on_the_victims_carries_no_convergence():
    (verdict,) = verify(table({("lightsplit-f", 8.0, 0): (0.3, 0)}), "cpu", [CLAIM])
    assert verdict.status == NOT_TESTABLE and verdict.convergence == () and verdict.convergence_note() == ""
