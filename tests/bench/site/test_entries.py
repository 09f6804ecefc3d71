"""Leaderboard entries: valid against the shipped schema, and what each holds, from a stored smoke grid
and from the committed HAR results."""
from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from bench.cli.report import load_results
from bench.report.combine import combine_tables
from bench.run.record import content_checksum
from bench.site.entries import build_entries
from bench.site.records import MissingRecordError, record_files
from bench.site.schema import SCHEMA_VERSION, entry_schema, schema_problems

REPO = Path(__file__).resolve().parents[3]
HAPT = REPO / "results" / "issue13-hapt"
WIKITEXT = REPO / "results" / "issue15-wikitext2"


def entries_of(*folders: Path) -> list[dict]:
    table, sources = combine_tables([(str(f), load_results(f)) for f in folders])
    return build_entries(table, records=record_files(sources))


@pytest.fixture(scope="module")
def smoke_entries(grid) -> list[dict]:
    return entries_of(grid)


def by_defense(entries: list[dict], name: str) -> dict:
    (entry,) = [e for e in entries if e["defense"]["name"] == name]
    return entry


def test_the_schema_is_a_valid_versioned_draft_2020_12_schema():
    schema = entry_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$id"].endswith(f":{SCHEMA_VERSION}")
    assert schema["properties"]["schema_version"]["const"] == SCHEMA_VERSION


def test_every_smoke_entry_follows_the_schema(smoke_entries):
    assert [e["defense"]["name"] for e in smoke_entries] == ["raw", "lightsplit-f"]  # uncompressed first, then CR 8
    for entry in smoke_entries:
        assert schema_problems(entry) == []
        assert entry["schema_version"] == SCHEMA_VERSION
        assert json.loads(json.dumps(entry, allow_nan=False)) == entry  # plain JSON: no NaN


def test_an_entry_breaking_the_schema_is_named(smoke_entries):
    broken = copy.deepcopy(smoke_entries[0])
    del broken["accuracy"]
    broken["records"][0]["sha256"] = "not a hash"
    problems = schema_problems(broken)
    assert any("'accuracy' is a required property" in p for p in problems)
    assert any(p.startswith("at /records/0/sha256:") for p in problems)


def test_an_entry_names_every_cell_of_its_configuration_with_the_sha256_of_its_file(smoke_entries, grid):
    raw = by_defense(smoke_entries, "raw")
    assert raw["defense"] == {"name": "raw", "label": "Raw", "knobs": {"lambda_wcc": 0.0}}
    assert (raw["profile"], raw["dataset"], raw["seeds"]) == ("smoke", "digits", [0, 1])
    assert sorted((r["attack"], r["seed"]) for r in raw["records"]) == [
        ("decoder-ref", 0), ("decoder-ref", 0), ("decoder-ref", 1), ("prior", 0), ("prior", 1)]
    for record in raw["records"]:
        path = Path(record["results"]) / record["path"]
        assert path == grid / "cells" / f"{record['cell_id']}.json"
        assert record["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        assert record["checksum"] == content_checksum(json.loads(path.read_bytes()))  # the stored one, of the content
    assert raw["code_versions"] and all(isinstance(v, str) for v in raw["code_versions"])


def test_stored_records_carry_the_attacks_facts(grid):
    facts = {}
    for path in (grid / "cells").glob("*.json"):
        data = json.loads(path.read_text())
        facts[data["cell"]["attack"]] = (data["threat_model"], data["attack_kinds"], data["headline_metric"])
    assert facts == {"decoder-ref": ("passive", ["image"], "ssim"), "prior": ("passive", ["image"], "ssim")}


def test_accuracy_bytes_attacks_worst_case_and_floor(smoke_entries):
    lightsplit = by_defense(smoke_entries, "lightsplit-f")
    assert lightsplit["defense"]["knobs"] == {"cr": 8.0, "lambda_wcc": 0.0}
    assert lightsplit["defense"]["label"] == "LightSplit-F (CR 8×)"
    assert lightsplit["accuracy"]["n"] == 2 and lightsplit["accuracy"]["ci95"] is not None
    assert lightsplit["bytes_per_sample"]["up"]["mean"] * 8 == by_defense(smoke_entries, "raw")["bytes_per_sample"]["up"]["mean"]
    attacks = {a["attack"]: a for a in lightsplit["attacks"]}
    assert set(attacks) == {"decoder-ref", "prior"}
    assert attacks["decoder-ref"]["headline_metric"] == "ssim" and attacks["decoder-ref"]["threat_model"] == "passive"
    assert attacks["decoder-ref"]["metrics"]["ssim"]["n"] == 2
    worst = lightsplit["worst_case"]["ssim"]
    assert worst["attack"] == "decoder-ref"  # the prior is the floor, never the worst case
    assert worst["stat"] == attacks["decoder-ref"]["metrics"]["ssim"]
    assert worst["floor_metric"] == "ssim" and worst["floor"] == lightsplit["floor"]["metrics"]["ssim"]
    assert worst["leakage"]["measured"] == (worst["leakage"]["gap"] > worst["leakage"]["noise"])
    assert all(w["floor_metric"] == m for m, w in lightsplit["worst_case"].items())  # no min-max scoring here
    assert lightsplit["ranking"] == {"metric": "ssim", "direction": -1, "value": worst["stat"]["mean"], "attack": "decoder-ref", "n": 2,
                                    "ranked": not lightsplit["flags"]["not_learned_cells"]}  # smoke victims may not learn
    assert not any(m.endswith(("_black", "_grey")) for m in lightsplit["floor"]["metrics"])  # baselines, not floors
    assert lightsplit["label"] == "LightSplit-F (CR 8×)"  # digits' default victim and setting: nothing to add
    assert lightsplit["bytes_group"]["group_cr"] == 8.0 and lightsplit["bytes_group"]["matches_nominal"] is True


def test_the_worst_case_takes_the_strongest_budget_seed_by_seed(grid, smoke_entries):
    """Raw's decoder at budgets 1 and 4 on seed 0, at 1 on seed 1: seed 0 takes the stronger of the two."""
    ssim = _ssim(grid, "raw")
    raw = by_defense(smoke_entries, "raw")
    worst = raw["worst_case"]["ssim"]
    expected = [max(ssim[1.0, 0], ssim[4.0, 0]), ssim[1.0, 1]]
    assert [(s["seed"], s["attack"]) for s in worst["seeds"]] == [(0, "decoder-ref"), (1, "decoder-ref")]
    assert [s["value"] for s in worst["seeds"]] == pytest.approx(expected)
    assert worst["stat"]["mean"] == pytest.approx(sum(expected) / 2) and worst["stat"]["n"] == raw["ranking"]["n"] == 2


def _ssim(grid: Path, defense: str) -> dict[tuple[float, int], float]:
    """``{(budget, seed): SSIM}`` of the stored decoder-ref cells of ``defense``."""
    table = load_results(grid)
    rows = table[(table["attack"] == "decoder-ref") & (table["defense"] == defense) & (table["metric"] == "ssim")]
    return {(float(b), int(s)): float(v) for b, s, v in zip(rows["attack_budget"], rows["seed"], rows["value"])}


def test_convergence_is_judged_on_the_seeds_stored_at_both_budgets(grid, smoke_entries):
    decoders = {a["settings"]["budget"]: a for a in by_defense(smoke_entries, "raw")["attacks"] if a["attack"] == "decoder-ref"}
    assert set(decoders) == {1.0, 4.0}
    verdict = decoders[1.0]["convergence"]
    assert verdict["budget"] == 1.0 and verdict["larger"] == 4.0 and verdict["metric"] == "ssim"
    ssim = _ssim(grid, "raw")
    (seed,) = verdict["seeds"]  # ×4 holds seed 0 only: seed 1 is counted, never judged
    assert seed["seed"] == 0 and verdict["unpaired"] == 1 and seed["tolerance"] == 0.02
    assert seed["gain"] == pytest.approx(ssim[4.0, 0] - ssim[1.0, 0])
    expected = "unstable" if seed["gain"] < -0.02 else "not converged" if seed["gain"] > 0.02 else "converged"
    assert verdict["verdict"] == expected and verdict["converged"] == (expected == "converged")
    assert decoders[4.0]["convergence"]["verdict"] == "unknown" and decoders[4.0]["convergence"]["seeds"] == []
    flagged = by_defense(smoke_entries, "raw")["flags"]["not_converged"]
    assert flagged == ([] if expected == "converged" else ["decoder-ref (budget=1, precision=float32)"])
    assert all(a["convergence"]["verdict"] == "unknown" for a in by_defense(smoke_entries, "lightsplit-f")["attacks"])


def test_the_verdicts_the_schema_allows_are_the_rules():
    from bench.report.verdicts import VERDICTS

    item = entry_schema()["properties"]["attacks"]["items"]["properties"]["convergence"]
    assert tuple(item["properties"]["verdict"]["enum"]) == VERDICTS


@pytest.mark.parametrize("change, verdict", [(-0.3, "unstable"), (+0.3, "not converged")])
def test_a_fall_or_a_climb_at_four_times_the_budget_flags_the_entry(grid_copy, change, verdict):
    for name in ("results.parquet", "results.csv"):
        (grid_copy / name).unlink()
    ssim = _ssim(grid_copy, "raw")
    cells = {p: json.loads(p.read_text())["cell"] for p in (grid_copy / "cells").glob("*.json")}
    (larger,) = [p for p, c in cells.items() if c["defense"] == "raw" and c["attack"] == "decoder-ref"
                 and c["attack_knobs"].get("budget") == 4.0]
    _rewrite(larger, lambda d: d["metrics"].update(ssim=ssim[1.0, 0] + change))
    entry = by_defense(entries_of(grid_copy), "raw")
    assert schema_problems(entry) == []
    item = next(a for a in entry["attacks"] if a["attack"] == "decoder-ref" and a["settings"]["budget"] == 1.0)
    assert item["convergence"]["verdict"] == verdict
    assert entry["flags"]["not_converged"] == ["decoder-ref (budget=1, precision=float32)"] and entry["flags"]["flagged"]


def _rewrite(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    data["checksum"] = content_checksum(data)
    path.write_text(json.dumps(data, indent=1, sort_keys=True))


def test_failed_and_diverged_cells_are_flagged(grid_copy):
    for name in ("results.parquet", "results.csv"):
        (grid_copy / name).unlink()
    cells = {p: json.loads(p.read_text())["cell"] for p in (grid_copy / "cells").glob("*.json")}
    records = {(c["attack"], c["seed"]): p for p, c in cells.items() if c["defense"] == "lightsplit-f"}
    failed, diverged = records["prior", 1], records["decoder-ref", 1]
    _rewrite(failed, lambda d: d.update(status="failed", metrics={}, notes={}, error="RuntimeError: boom"))
    _rewrite(diverged, lambda d: d["metrics"].update(diverged=1.0))
    entry = by_defense(entries_of(grid_copy), "lightsplit-f")
    assert schema_problems(entry) == []
    assert entry["flags"]["failed_cells"] == [failed.stem] and entry["flags"]["diverged_cells"] == [diverged.stem]
    assert entry["flags"]["flagged"] is True
    assert {r["cell_id"]: r["status"] for r in entry["records"]}[failed.stem] == "failed"
    decoder = next(a for a in entry["attacks"] if a["attack"] == "decoder-ref")
    assert decoder["metrics"]["ssim"]["n"] == 1 and decoder["metrics"]["ssim"]["n_diverged"] == 1  # left out of the mean


def test_a_cell_whose_victim_is_at_chance_is_flagged_and_stays_in_the_means(grid_copy):
    for name in ("results.parquet", "results.csv"):
        (grid_copy / name).unlink()
    cells = {p: json.loads(p.read_text())["cell"] for p in (grid_copy / "cells").glob("*.json")}
    lsf = [p for p, c in cells.items() if c["defense"] == "lightsplit-f"]
    at_chance = next(p for p in lsf if cells[p]["attack"] == "decoder-ref")
    for path in lsf:  # smoke victims barely learn: every one well above chance but one
        above = 0.0 if path == at_chance else 0.5
        _rewrite(path, lambda d, above=above: d["metrics"].update(accuracy=d["metrics"]["chance_accuracy"] + above))
    entry = by_defense(entries_of(grid_copy), "lightsplit-f")
    assert schema_problems(entry) == []
    assert entry["flags"]["not_learned_cells"] == [at_chance.stem] and entry["flags"]["flagged"] is True
    decoder = next(a for a in entry["attacks"] if a["attack"] == "decoder-ref")
    assert decoder["metrics"]["ssim"]["n_diverged"] == 0


def test_a_missing_record_is_refused(grid_copy):
    next((grid_copy / "cells").glob("*.json")).unlink()
    for name in ("results.parquet", "results.csv"):  # newer than the folder's change: the table still lists the cell
        later = (grid_copy / "cells").stat().st_mtime + 10
        os.utime(grid_copy / name, (later, later))
    table, sources = combine_tables([(str(grid_copy), load_results(grid_copy))])
    with pytest.raises(MissingRecordError, match="holds no record"):
        record_files(sources)


def test_committed_har_results_rank_by_the_probes():
    entries = entries_of(HAPT)
    assert {e["dataset"] for e in entries} == {"hapt"}
    assert {"raw", "learned-1x1", "topk", "lightsplit-f", "lightsplit-l"} <= {e["defense"]["name"] for e in entries}
    for entry in entries:  # the folder may grow (its WCC arm): every entry, whatever it holds so far
        assert schema_problems(entry) == []
        assert {r["attack"] for r in entry["records"]} <= {"har-recon", "har-reid"}
        for metric, probe in (("median_r2", "har-recon"), ("reid_accuracy", "har-reid")):
            if metric in entry["worst_case"]:
                assert entry["worst_case"][metric]["attack"] == probe
        assert entry["ranking"]["metric"] == "median_r2" and entry["floor"] is None
        assert entry["accuracy"]["n_runs"] == len(entry["seeds"])
    raw = next(e for e in entries if e["defense"]["name"] == "raw")
    assert {a["headline_metric"] for a in raw["attacks"]} == {"median_r2", "reid_accuracy"}
    assert len(raw["records"]) == 6 and raw["accuracy"]["n"] == 3


def test_committed_language_model_entries_carry_perplexity_and_its_inflation():
    import pandas as pd

    entries = entries_of(WIKITEXT)
    table = pd.read_parquet(WIKITEXT / "results.parquet")
    for entry in entries:
        assert schema_problems(entry) == []
        assert entry["accuracy"]["mean"] is None  # a language model has no accuracy
        rows = table[(table["defense"] == entry["defense"]["name"]) & (table["cut"] == entry["cut"])
                     & (table["cr"].fillna(0) == (entry["defense"]["knobs"].get("cr") or 0))]
        best = rows[rows["metric"] == "best_val_perplexity"]["value"]
        inflation = rows[rows["metric"] == "perplexity_inflation"]["value"]
        assert entry["perplexity"]["best"]["mean"] == pytest.approx(best.mean())
        assert entry["perplexity"]["inflation"]["mean"] == pytest.approx(inflation.mean())
        assert entry["perplexity"]["best"]["n"] == len(best) == len(entry["seeds"])
        if entry["defense"]["name"] == "raw":
            assert entry["perplexity"]["inflation"]["mean"] == pytest.approx(1.0)


def test_image_entries_have_no_perplexity(smoke_entries):
    assert all("perplexity" not in e for e in smoke_entries)
