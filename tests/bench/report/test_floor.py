"""The floor row of the tables: the prior attack's value of each image attack column, worked out by hand.

Three seeds ``a−d, a, a+d`` give ``a ± 2.4841·d`` (Student t, 2 dof), as in test_table_contents.py.
The prior ran under two defenses; its floor is the per-seed mean over them, then the mean over seeds.
"""
import numpy as np
import pytest

from bench.report.floor import FLOOR_LABEL, difference_noise, floor_metric, leakage_gap, prior_floor
from bench.report.render import to_markdown
from bench.report.tables import TABLES, build_table
from tests.bench.report.handmade import runs, tidy

PRIOR = {"ssim": (0.10, 0.20, 0.30), "masked_mse": (0.50, 0.60, 0.70), "masked_mse_minmax": (0.9, 0.9, 0.9),
         "masked_mse_black": (0.80, 0.80, 0.80), "masked_mse_grey": (0.40, 0.40, 0.40), "accuracy": (0.5, 0.5, 0.5)}
# Under LightSplit-F the prior scores 0.02 more SSIM per seed: per-seed means 0.11, 0.21, 0.31.
PRIOR_LSF = {**PRIOR, "ssim": (0.12, 0.22, 0.32)}


def attacks(cut: str = "split-2"):
    return [
        runs("none", values={"accuracy": (0.96, 0.97, 0.98)}, cut=cut),
        runs("none", "lightsplit-f", cr=8.0, values={"accuracy": (0.92, 0.93, 0.94)}, cut=cut),
        runs("sdar", values={"ssim": (0.70, 0.80, 0.90)}, cut=cut),
        runs("sdar", "lightsplit-f", cr=8.0, values={"ssim": (0.40, 0.40, 0.40)}, cut=cut),
        runs("unsplit", values={"masked_mse_minmax": (0.20, 0.20, 0.20), "ssim": (0.3, 0.3, 0.3)}, cut=cut),
        runs("unsplit", "lightsplit-f", cr=8.0, values={"masked_mse_minmax": (0.30, 0.30, 0.30), "ssim": (0.2, 0.2, 0.2)},
             cut=cut),
    ]


def priors(cut: str = "split-2", shift: float = 0.0):
    moved = lambda values: {m: tuple(v + shift for v in per_seed) for m, per_seed in values.items()}  # noqa: E731
    return [runs("prior", values=moved(PRIOR), cut=cut), runs("prior", "lightsplit-f", cr=8.0, values=moved(PRIOR_LSF), cut=cut)]


def row_of(built, label: str = FLOOR_LABEL) -> dict:
    rows = built.body[built.body["Defense"] == label]
    assert len(rows) == 1
    return rows.iloc[0].to_dict()


def test_table_ii_floor_row_holds_the_priors_values():
    built = build_table(tidy(*attacks(), *priors()), TABLES["II"])
    floor = row_of(built)
    assert floor["Dataset"] == "MNIST" and floor["CR"] == "" and floor["λ_WCC"] == ""
    assert floor["Acc. (%)"] == ""  # the victim's own metric has no floor
    assert floor["SDAR: SSIM ↓"] == "0.210 ± 0.248"  # per-seed means over both defenses: 0.11, 0.21, 0.31
    # the min-max column's floor is the prior's as-returned masked MSE, not its masked_mse_minmax (0.9)
    assert floor["UnSplit: masked MSE (min-max) ↑"] == "0.6000 ± 0.2484"
    assert floor["worst case: SSIM ↓"] == "0.210 ± 0.248"
    assert list(built.body["Defense"]) == ["Raw", "LightSplit-F", FLOOR_LABEL]  # after the configurations
    text = to_markdown(built)
    assert "floor (prior): the prior attack's absolute value" in text
    assert ("Trivial baselines (MNIST mnistnet split-2, from the prior's cells): an all-black image scores masked MSE "
            "0.8000; a constant-0.5 image scores masked MSE 0.4000.") in text


def test_floor_numbers_and_no_floor_without_prior_cells():
    built = build_table(tidy(*attacks(), *priors()), TABLES["II"])
    prior = built.numbers[built.numbers["attack"] == "prior"]
    assert sorted(prior["metric"]) == ["masked_mse", "ssim"]  # one line per floor metric
    assert prior.set_index("metric").loc["ssim", "mean"] == pytest.approx(0.21)
    bare = build_table(tidy(*attacks()), TABLES["II"])
    assert FLOOR_LABEL not in set(bare.body["Defense"]) and "floor (prior)" not in to_markdown(bare)
    assert bare.has_defended_rows and list(bare.body["Defense"]) == ["Raw", "LightSplit-F"]


def test_one_floor_row_per_cut_with_its_own_prior():
    table = tidy(*attacks("split-2"), *priors("split-2"), *attacks("split-4"), *priors("split-4", shift=0.1))
    built = build_table(table, TABLES["V"])
    assert built.body[["Cut", "Defense"]].values.tolist() == [
        ["split-2", "Raw"], ["split-2", "LightSplit-F"], ["split-2", FLOOR_LABEL],
        ["split-4", "Raw"], ["split-4", "LightSplit-F"], ["split-4", FLOOR_LABEL],
    ]
    assert built.body["SDAR: SSIM ↓"].tolist()[2::3] == ["0.210 ± 0.248", "0.310 ± 0.248"]


def test_a_column_the_prior_did_not_record_is_a_dash_with_a_footnote():
    table = tidy(runs("fora", values={"ssim": (0.6, 0.6, 0.6), "lpips": (0.2, 0.2, 0.2)}),
                 runs("fora", "lightsplit-f", cr=8.0, values={"ssim": (0.4, 0.4, 0.4), "lpips": (0.3, 0.3, 0.3)}),
                 runs("prior", values={"ssim": (0.1, 0.1, 0.1)}))
    built = build_table(table, TABLES["XIII"])
    floor = row_of(built)
    assert floor["FORA: SSIM ↓"] == "0.100 ± 0.000" and floor["FORA: LPIPS ↑"] == "—¹"
    assert built.footnotes == ["not recorded by the prior attack (lpips)"]


def test_prior_floor_pools_defenses_per_seed_and_leaves_out_diverged_cells():
    table = tidy(runs("prior", values={"ssim": (0.1, 0.2, 0.3)}, diverged_seed=-1),
                 runs("prior", "topk", cr=8.0, values={"ssim": (0.3, 0.4, 9.9)}, diverged_seed=2))
    row = prior_floor(table).set_index("metric").loc["ssim"]
    assert row["mean"] == pytest.approx((0.2 + 0.3 + 0.3) / 3)  # seed 2: the diverged top-K cell left out
    assert row["n"] == 3 and row["n_runs"] == 3 and row["n_diverged"] == 0


def test_floor_metric_and_the_noise_rule():
    assert floor_metric("masked_mse_minmax") == "masked_mse" and floor_metric("box_ssim_minmax") == "box_ssim"
    assert floor_metric("ssim") == "ssim" and floor_metric("masked_mse_black") == "masked_mse_black"
    # SSIM (smaller = more private): attack 0.2, 0.4 (mean 0.3) vs prior 0.3: gap 0, 2·SE = 2·√(0.02/2) = 0.2
    gap, noise = leakage_gap(np.array([0.2, 0.4]), np.array([0.3]), "ssim")
    assert gap == pytest.approx(0.0) and noise == pytest.approx(0.2)
    gap, _ = leakage_gap(np.array([0.8]), np.array([0.3]), "ssim")  # the attack beats the floor by 0.5
    assert gap == pytest.approx(0.5)
    gap, noise = leakage_gap(np.array([0.2]), np.array([0.5]), "masked_mse")  # larger = more private
    assert gap == pytest.approx(0.3) and noise == 0.0


def test_the_noise_of_a_scaled_side_scales_with_its_factor():
    left, right = np.array([0.9, 0.95, 1.0]), np.array([0.5, 0.7])
    slow = 2 * np.sqrt(left.var(ddof=1) / 3 + (0.94 * right).var(ddof=1) / 2)
    assert difference_noise(left, right, 0.94) == pytest.approx(slow)
    assert difference_noise(left, right[:1], 0.94) == pytest.approx(2 * left.std(ddof=1) / np.sqrt(3))


def test_a_seed_whose_run_fell_to_the_floor_is_named_beside_the_mean():
    # SDAR on raw works on seeds 0 and 1 and fails on seed 2 (0.05 against that seed's floor, 0.31):
    # the mean keeps it, and a footnote names the seed; LightSplit-F's 0.40 stays above every seed's floor.
    failed = [runs("sdar", values={"ssim": (0.70, 0.80, 0.05)}), attacks()[3], *priors()]
    built = build_table(tidy(*failed), TABLES["II"])
    raw, lsf = built.body.iloc[0]["SDAR: SSIM ↓"], built.body.iloc[1]["SDAR: SSIM ↓"]
    assert raw.startswith("0.517") and raw[-1] in "¹²³" and lsf[-1] not in "¹²³"
    note = built.footnotes[-1]
    assert note == "no leakage measured on seed 2: at or past that seed's floor (kept in the mean)"
    untouched = build_table(tidy(*attacks(), *priors()), TABLES["II"])
    assert not any("seed's floor" in f for f in untouched.footnotes)
