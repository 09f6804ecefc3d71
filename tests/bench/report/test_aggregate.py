import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bench.report.aggregate import aggregate, config_key, numeric_factors, pareto_mask, select_profile, t_halfwidth, victim_view
from tests.bench.report import synthetic


def hand_ci(values) -> float:
    x = np.asarray(values, dtype=float)
    return stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))


def row(agg: pd.DataFrame, attack: str, key: str, metric: str) -> pd.Series:
    defense, cr = synthetic.CONFIGS[key]
    hit = agg[(agg["attack"] == attack) & (agg["defense"] == defense) & (agg["metric"] == metric)
              & ((agg["cr"] == cr) if cr is not None else agg["cr"].isna())]
    assert len(hit) == 1
    return hit.iloc[0]


@pytest.fixture(scope="module")
def agg(tidy):
    return aggregate(tidy)


def test_mean_and_ci_match_a_hand_computation(agg):
    values = synthetic.ATTACK_METRICS["decoder-ref"]["ssim"]["raw"]
    r = row(agg, "decoder-ref", "raw", "ssim")
    assert r["mean"] == pytest.approx(np.mean(values))
    assert r["ci"] == pytest.approx(hand_ci(values))
    assert r["n"] == 3 and r["n_runs"] == 3 and r["n_diverged"] == 0 and r["is_raw"]


def test_one_run_has_no_interval():
    assert math.isnan(t_halfwidth([0.5]))
    one = synthetic.table()
    one = one[one["seed"] == 0]
    r = row(aggregate(one), "decoder-ref", "ls8", "ssim")
    assert r["n"] == 1 and math.isnan(r["ci"]) and r["mean"] == pytest.approx(0.60)


def test_diverged_runs_are_left_out_of_every_metric_and_counted(agg):
    for metric in ("masked_mse", "ssim", "accuracy"):
        r = row(agg, "unsplit", "ls16", metric)
        assert (r["n"], r["n_runs"], r["n_diverged"]) == (2, 3, 1)
    kept = synthetic.ATTACK_METRICS["unsplit"]["masked_mse"]["ls16"][:2]
    r = row(agg, "unsplit", "ls16", "masked_mse")
    assert r["mean"] == pytest.approx(np.mean(kept)) and r["ci"] == pytest.approx(hand_ci(kept))


def test_delta_vs_raw_is_paired_per_seed(agg):
    x = np.array(synthetic.ATTACK_METRICS["decoder-ref"]["ssim"]["ls8"])
    raw = np.array(synthetic.ATTACK_METRICS["decoder-ref"]["ssim"]["raw"])
    r = row(agg, "decoder-ref", "ls8", "ssim")
    assert r["delta"] == pytest.approx(np.mean(x - raw)) and r["delta_ci"] == pytest.approx(hand_ci(x - raw))
    rel = (x - raw) / np.abs(raw) * 100
    assert r["rel"] == pytest.approx(np.mean(rel)) and r["rel_ci"] == pytest.approx(hand_ci(rel))
    assert r["n_pairs"] == 3 and not r["is_raw"]
    assert row(agg, "decoder-ref", "raw", "ssim")["delta"] == 0


def test_delta_pairs_skip_the_diverged_run(agg):
    metric = synthetic.ATTACK_METRICS["unsplit"]["masked_mse"]
    x, raw = np.array(metric["ls16"][:2]), np.array(metric["raw"][:2])
    r = row(agg, "unsplit", "ls16", "masked_mse")
    assert r["n_pairs"] == 2 and r["rel"] == pytest.approx(np.mean((x - raw) / raw * 100))


def test_missing_values_keep_their_stored_reason(agg):
    r = row(agg, "decoder-ref", "ls8", "lpips")
    assert r["n"] == 0 and math.isnan(r["mean"]) and r["note"] == synthetic.LPIPS_NOTE


def test_victim_view_keeps_utility_of_diverged_attack_runs(tidy):
    agg = aggregate(victim_view(tidy), metrics=["accuracy"])
    r = row(agg, "none", "ls16", "accuracy")
    acc, raw = np.array(synthetic.ACCURACY["ls16"]), np.array(synthetic.ACCURACY["raw"])
    assert r["n"] == 3 and r["mean"] == pytest.approx(acc.mean())
    assert r["delta"] == pytest.approx(np.mean(acc - raw)) and r["n_pairs"] == 3


def test_victim_view_finds_utility_without_none_cells(tidy):
    attack_only = tidy[tidy["attack"] != "none"]
    agg = aggregate(victim_view(attack_only), metrics=["accuracy"])
    r = row(agg, "none", "ls8", "accuracy")
    assert r["n"] == 3 and r["delta"] == pytest.approx(-0.04)


def test_a_victim_retrained_on_two_kinds_of_machine_counts_each_kind_once(tidy):
    ls8 = tidy[(tidy["defense"] == "lightsplit-f") & (tidy["cr"] == 8.0) & (tidy["seed"] == 0)]
    attacks = sorted(set(ls8["attack"]) - {"none"})
    machine = ls8["attack"].map(lambda a: "kind B" if a == attacks[0] else "kind A")  # one cell from another kind
    retrained = ls8["metric"].eq("accuracy") & machine.eq("kind B")
    moved = ls8.assign(cpu=machine, value=ls8["value"].where(~retrained, ls8["value"] + 0.06))
    table = pd.concat([tidy.drop(ls8.index).assign(cpu="kind A"), moved], ignore_index=True)
    stored = synthetic.ACCURACY["ls8"][0]
    accuracy = lambda t: victim_view(t).query("defense == 'lightsplit-f' and cr == 8.0 and seed == 0 "  # noqa: E731
                                              "and metric == 'accuracy'")["value"].item()
    assert accuracy(table) == pytest.approx(stored + 0.03)  # kind A's cells and kind B's cell, once each
    fewer_a = table[~(table["attack"].eq(attacks[-1]) & table["defense"].eq("lightsplit-f") & table["cr"].eq(8.0)
                      & table["seed"].eq(0))]
    assert accuracy(fewer_a) == pytest.approx(stored + 0.03)  # one cell of a known kind less: no change
    assert accuracy(tidy) == pytest.approx(stored)


def test_two_machine_kinds_that_trained_a_victim_identically_count_once(tidy):
    ls8 = tidy[(tidy["defense"] == "lightsplit-f") & (tidy["cr"] == 8.0) & (tidy["seed"] == 0)]
    assert sorted(set(ls8["attack"])) == ["decoder-ref", "none", "unsplit"]
    # kind A trained it, kind B retrained it otherwise, and the unsplit cell's machine is unrecorded
    machine = ls8["attack"].map({"none": "kind A", "decoder-ref": "kind B", "unsplit": None})
    retrained = ls8["metric"].eq("accuracy") & machine.eq("kind B")
    moved = ls8.assign(cpu=machine, value=ls8["value"].where(~retrained, ls8["value"] + 0.06))
    table = pd.concat([tidy.drop(ls8.index).assign(cpu="kind A"), moved], ignore_index=True)
    stored = synthetic.ACCURACY["ls8"][0]
    accuracy = victim_view(table).query("defense == 'lightsplit-f' and cr == 8.0 and seed == 0 "
                                        "and metric == 'accuracy'")["value"].item()
    assert accuracy == pytest.approx(stored + 0.03)  # the unrecorded cell ended as kind A's: one run, not two


def test_mixed_profiles_are_refused_in_one_line(tidy):
    mixed = pd.concat([tidy, synthetic.table(profile="cpu")], ignore_index=True)
    with pytest.raises(ValueError, match="mix profiles cpu, smoke") as err:
        aggregate(mixed)
    assert "\n" not in str(err.value)
    assert set(select_profile(mixed, "cpu")["profile"]) == {"cpu"}
    with pytest.raises(ValueError, match="not in the results"):
        select_profile(mixed, "paper")


def test_pareto_mask():
    points = pd.DataFrame({"acc": [0.9, 0.8, 0.95, 0.7], "bytes": [100, 50, 400, 60]})
    assert pareto_mask(points, maximize=["acc"], minimize=["bytes"]).tolist() == [True, True, True, False]



def test_a_victim_that_did_not_learn_is_flagged_only_where_its_chance_rate_is_stored():
    from bench.report.aggregate import not_learned_cells
    from bench.run.cell import Cell
    from bench.run.store import CellRecord, records_to_table

    def table(accuracies, chance=True):
        records = []
        for seed, acc in accuracies.items():
            metrics = {"ssim": 0.5, "accuracy": acc} | ({"chance_accuracy": 0.1, "test_samples": 2000.0} if chance else {})
            records.append(CellRecord(Cell(dataset="mnist", victim="mnistnet", cut="split-2", defense="raw", profile="cpu",
                                           seed=seed, attack="sdar"), "ok", metrics))
        return records_to_table(records)

    # 2 binomial SE of chance at n = 2000: 0.1 + 2·√(0.09/2000) = 0.1134; 0.112 is inside, 0.12 outside
    flagged = not_learned_cells(table({0: 0.112, 1: 0.12, 2: 0.75}))
    assert len(flagged) == 1
    assert not_learned_cells(table({0: 0.1}, chance=False)) == set()


def with_budget_study() -> pd.DataFrame:
    """The synthetic table plus seed-0 decoder-ref cells at 4× the budget (raw 0.99, LS-F CR 8 0.11)."""
    import dataclasses

    from bench.run.derived import add_derived_metrics
    from bench.run.store import OK, CellRecord, records_to_table

    records = synthetic.records()
    for key, ssim in (("raw", 0.99), ("ls8", 0.11)):
        study = dataclasses.replace(synthetic.cell(key, 0, "decoder-ref"), attack_knobs={"budget": 4.0})
        records.append(CellRecord(study, OK, metrics={"accuracy": synthetic.ACCURACY[key][0], "ssim": ssim, "diverged": 0.0}))
    table = add_derived_metrics(records_to_table(records))
    # bench run names the default budget in every attack cell: the ×1 cells carry 1.0, as stored ones do
    table.loc[(table["attack"] != "none") & table["attack_budget"].isna(), "attack_budget"] = 1.0
    return table


def test_at_default_settings_leaves_out_exactly_the_cells_at_other_attack_settings():
    from bench.report.aggregate import at_default_settings

    table = with_budget_study()
    kept = at_default_settings(table)
    study = table["attack_budget"].astype(float) == 4.0
    assert study.sum() > 0 and len(kept) == len(table) - study.sum()
    assert set(kept["cell_id"]) == set(table.loc[~study, "cell_id"])
    assert (kept["attack"] == "none").sum() == (table["attack"] == "none").sum()  # victims untouched


def test_a_table_column_shows_the_default_budget_and_the_worst_case_still_reads_the_study():
    from bench.report.tables import TABLES, build_table

    built = build_table(with_budget_study(), TABLES["II"])
    numbers = built.numbers
    ref = numbers[(numbers["attack"] == "decoder-ref") & (numbers["metric"] == "ssim")]
    raw = ref[ref["cr"].isna()]
    assert raw["mean"].item() == pytest.approx(np.mean(synthetic.ATTACK_METRICS["decoder-ref"]["ssim"]["raw"]))
    assert raw["n"].item() == 3
    worst = numbers[(numbers["attack"] == "worst-case") & numbers["cr"].isna()]
    # seed by seed: the study's 0.99 wins seed 0; seeds 1 and 2 take their strongest ×1 attack
    assert worst["mean"].item() == pytest.approx(np.mean([0.99, *strongest_raw_ssim(1, 2)])) and worst["n"].item() == 3


def strongest_raw_ssim(*seeds: int) -> list[float]:
    """The largest raw SSIM of the synthetic table's ×1 attacks on each of ``seeds``."""
    return [max(m["ssim"]["raw"][seed] for m in synthetic.ATTACK_METRICS.values() if "raw" in m.get("ssim", {}))
            for seed in seeds]


def test_another_sdar_weight_is_a_study_left_out_of_the_columns_and_read_by_the_worst_case():
    import dataclasses

    from bench.report.aggregate import at_default_settings
    from bench.report.tables import TABLES, build_table
    from bench.run.store import OK, CellRecord, records_to_table

    base = with_budget_study()
    study = dataclasses.replace(synthetic.cell("raw", 0, "decoder-ref"), attack_knobs={"lambda1_scale": 2.5})
    extra = records_to_table([CellRecord(study, OK, metrics={"accuracy": synthetic.ACCURACY["raw"][0], "ssim": 0.995})])
    table = pd.concat([base, extra.assign(attack_budget=1.0)], ignore_index=True)
    table.loc[(table["attack"] != "none") & table["attack_lambda1_scale"].isna(), "attack_lambda1_scale"] = 1.0
    assert set(table["cell_id"]) - set(at_default_settings(table)["cell_id"]) == (
        set(base.loc[base["attack_budget"].astype(float) == 4.0, "cell_id"]) | {study.id})
    numbers = build_table(table, TABLES["II"]).numbers
    raw = numbers[numbers["cr"].isna() & (numbers["metric"] == "ssim")]
    column = raw[raw["attack"] == "decoder-ref"]
    assert column["n"].item() == 3 and column["mean"].item() < 0.99
    assert raw.loc[raw["attack"] == "worst-case", "mean"].item() == pytest.approx(np.mean([0.995, *strongest_raw_ssim(1, 2)]))


def test_at_another_budget_the_attack_cells_of_that_budget_replace_those_at_one():
    from bench.report.aggregate import at_default_settings

    table = with_budget_study()
    kept = at_default_settings(table, budget=4.0)
    study = table["attack_budget"].astype(float) == 4.0
    assert set(kept.loc[kept["attack"] != "none", "cell_id"]) == set(table.loc[study, "cell_id"])
    assert (kept["attack"] == "none").sum() == (table["attack"] == "none").sum()  # victims untouched
    assert at_default_settings(table, budget=16.0)["attack"].eq("none").all()  # no cell at 16: victims only


def test_a_table_at_four_times_the_budget_shows_the_study_and_says_so():
    from bench.report.tables import TABLES, build_table

    built = build_table(with_budget_study(), TABLES["II"], attack_budget=4.0)
    ref = built.numbers[(built.numbers["attack"] == "decoder-ref") & (built.numbers["metric"] == "ssim")]
    raw = ref[ref["cr"].isna()]
    assert raw["mean"].item() == pytest.approx(0.99) and raw["n"].item() == 1
    assert "attacks at ×4 its budget" in built.caption
    assert "attacks at" not in build_table(with_budget_study(), TABLES["II"]).caption
    assert built.has_attack_columns  # no cell at 16: the victims' columns and the worst case only
    assert not build_table(with_budget_study(), TABLES["II"], attack_budget=16.0).has_attack_columns


def test_claims_compare_the_default_budget_only():
    from bench.report.claims import _values
    from bench.report.paper_claims import Selector

    values = _values(with_budget_study(), Selector("raw", "decoder-ref"), "ssim")
    assert sorted(values["value"]) == pytest.approx(sorted(synthetic.ATTACK_METRICS["decoder-ref"]["ssim"]["raw"]))


def test_claims_at_another_budget_read_its_cells_and_keep_the_victims_and_the_floor():
    from bench.report.claims import _at_budget, _values
    from bench.report.paper_claims import Selector
    from bench.run.store import OK, CellRecord, records_to_table

    prior = records_to_table([CellRecord(synthetic.cell("raw", 0, "prior"), OK, metrics={"ssim": 0.1})]).assign(attack_budget=1.0)
    table = pd.concat([with_budget_study(), prior], ignore_index=True)
    at_four = _at_budget(table, 4.0)
    assert _values(at_four, Selector("raw", "decoder-ref"), "ssim")["value"].tolist() == pytest.approx([0.99])
    for attack in ("none", "prior"):
        assert (at_four["attack"] == attack).sum() == (table["attack"] == attack).sum() > 0
    assert _at_budget(table, 16.0)["attack"].isin(["none", "prior"]).all()


def test_claims_at_another_budget_keep_the_utility_of_victims_stored_only_in_attack_cells():
    from bench.report.claims import verify

    table = with_budget_study().assign(profile="cpu")
    table = table[table["attack"] != "none"]  # every victim's utility lives in its attack cells (budget 1)
    utility = lambda budget: [(v.claim.id, v.status, v.detail) for v in verify(table, "cpu", attack_budget=budget)  # noqa: E731
                              if v.claim.id.startswith("utility")]
    assert any(status == "held" for _, status, _ in utility(1.0))
    assert utility(4.0) == utility(1.0)


def row_by_row_numeric_factors(table: pd.DataFrame, fields) -> pd.DataFrame:
    """The slow oracle: every row of a column parsed, the column converted where every set value parsed."""
    out = table.copy()
    for column in fields:
        numbers = pd.to_numeric(out[column], errors="coerce")
        if numbers.notna().sum() == out[column].notna().sum():
            out[column] = numbers.astype(float)
    return out


def test_numeric_factors_parse_each_distinct_value_as_every_row_would_be():
    table = pd.DataFrame({
        "cr": pd.Series([8, "8", None, 16.0, np.nan], dtype=object),  # numbers and numeric text, some unset
        "defense": ["raw", "topk", None, "raw", "raw"],  # text: left alone
        "sigma": pd.Series(["0.5", "x", "0.5", None, None], dtype=object),  # one value that is no number
        "unset": pd.Series([None] * 5, dtype=object),  # nothing set: all NaN, as floats
        "clients": [1, 1, 2, 2, 1],
    })
    fields = list(table.columns)
    fast, slow = numeric_factors(table, fields), row_by_row_numeric_factors(table, fields)
    pd.testing.assert_frame_equal(fast, slow)
    assert fast["cr"].tolist()[:2] == [8.0, 8.0] and fast["sigma"].tolist()[0] == "0.5" and fast["unset"].dtype == float


def test_a_configuration_key_matches_a_record_and_a_table_row_whatever_form_its_missing_values_take():
    record = {"defense": "raw", "cr": None, "seed": 0}
    row = pd.DataFrame([{"defense": "raw", "cr": np.nan, "seed": 0}]).astype({"cr": "Float64"}).iloc[0]  # pandas' NA
    assert config_key(row, ("defense", "cr", "seed")) == config_key(record, ("defense", "cr", "seed")) == ("raw", None, 0)
    assert config_key({"defense": "raw", "cr": float("nan")}, ("defense", "cr", "absent")) == ("raw", None, None)
    assert config_key({"cr": 8.0}, ("cr",)) != config_key({"cr": None}, ("cr",))
