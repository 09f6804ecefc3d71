"""Li et al.'s label-leakage claim (bench.report.paper_claims.LABEL_CLAIMS) checked on tidy tables made by
hand: a mean AUC above 0.9 on the undefended run holds, one below does not, within 2·SE of 0.9 is within
noise, and a label attack not run is not testable."""
from bench.report.claims import HELD, NOT_HELD, NOT_TESTABLE, WITHIN_NOISE, verify
from bench.report.paper_claims import CLAIMS, LABEL_CLAIMS
from tests.bench.report.handmade import runs, tidy


def verdicts(*groups):
    return {v.claim.id: v for v in verify(tidy(*groups), "cpu", LABEL_CLAIMS)}


def test_norm_and_direction_scoring_are_held_to_an_auc_above_0_9_on_raw():
    found = verdicts(runs("label-direction", values={"label_auc_mean": (0.97, 0.98, 0.99)}),
                     runs("label-norm", values={"label_auc_mean": (0.60, 0.62, 0.64)}),
                     runs("label-norm", "lightsplit-f", cr=8.0, values={"label_auc_mean": (0.99, 0.99, 0.99)}))  # not raw
    assert found["label-direction-auc-above-0.9-raw"].status == HELD
    assert found["label-norm-auc-above-0.9-raw"].status == NOT_HELD
    assert found["label-norm-auc-above-0.9-raw"].detail == "label_auc_mean: raw / label-norm 0.6200 ±0.0497 (n=3) > 0.9"
    assert len(found["label-norm-auc-above-0.9-raw"].convergence) == 1  # the side named twice is judged once


def test_a_mean_within_noise_of_0_9_or_no_cell_is_not_a_verdict():
    found = verdicts(runs("label-norm", values={"label_auc_mean": (0.85, 0.91, 0.97)}))
    assert found["label-norm-auc-above-0.9-raw"].status == WITHIN_NOISE
    assert found["label-direction-auc-above-0.9-raw"].status == NOT_TESTABLE


def test_the_claims_are_registered_on_the_profiles_that_test_them():
    assert all(c in CLAIMS and c.profiles == ("cpu", "paper") and "multi-class" in c.text for c in LABEL_CLAIMS)
