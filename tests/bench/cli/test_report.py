from pathlib import Path

import pandas as pd
import pytest

from tests.bench.cli.runner import run_cli
from tests.bench.report import synthetic


def run(capsys, args: list[str]) -> tuple[int, str, str]:
    return run_cli(capsys, args)


@pytest.fixture()
def results(tmp_path, tidy) -> Path:
    root = tmp_path / "results"
    root.mkdir()
    tidy.to_parquet(root / "results.parquet", index=False)
    return root


@pytest.fixture()
def mixed(tmp_path, tidy) -> Path:
    root = tmp_path / "mixed"
    root.mkdir()
    pd.concat([tidy, synthetic.table(profile="cpu")], ignore_index=True).to_parquet(root / "results.parquet", index=False)
    return root


def test_report_markdown_to_stdout(capsys, results):
    code, out, _ = run(capsys, ["report", "--results", str(results)])
    assert code == 0
    shown = [line.split(":")[0].strip("*") for line in out.splitlines() if line.startswith("**Table ")]
    assert shown == ["Table II", "Table III", "Table XIII", "Table XIV", "Table XX"]  # the tables with data
    assert out == run(capsys, ["report", "--results", str(results), "--table", "ii,III,XIII,xiv,XX"])[1]


def test_report_builds_the_demo_table_only_when_named(capsys, results):
    code, out, _ = run(capsys, ["report", "--results", str(results), "--table", "demo"])
    assert code == 0 and out.startswith("**Table DEMO: make demo at a glance.")
    assert "| bytes up / sample |" in out and "UnSplit: masked MSE (min-max) ↑" in out
    assert "Table DEMO" not in run(capsys, ["report", "--results", str(results)])[1]


def test_report_writes_one_file_per_table(capsys, results, tmp_path):
    code, _, err = run(capsys, ["report", "--results", str(results), "--table", "II,III", "--format", "csv",
                                "--out", str(tmp_path / "tables")])
    assert code == 0 and sorted(p.name for p in (tmp_path / "tables").iterdir()) == ["table_II.csv", "table_III.csv"]
    code, _, _ = run(capsys, ["report", "--results", str(results), "--table", "III", "--format", "latex",
                              "--standalone", "--out", str(tmp_path / "iii.tex")])
    assert code == 0 and (tmp_path / "iii.tex").read_text().startswith("\\documentclass{article}")


def test_report_reads_cell_records_without_a_collected_table(capsys, tmp_path):
    from bench.run.store import ResultStore

    store = ResultStore(tmp_path / "cells-only")
    for record in synthetic.records():
        store.write(record)
    code, out, _ = run(capsys, ["report", "--results", str(store.root), "--table", "II"])
    assert code == 0 and "| MNIST | LightSplit-F | 8× | 0 | −4.0 ± 0.0 |" in out


@pytest.mark.parametrize("args,needle", [
    (["--table", "IX"], "unknown IX"),
    (["--format", "html"], "'html' is not one of"),
    (["--profile", "paper"], "profile 'paper' is not in the results"),
    (["--table", "II,III", "--format", "csv", "--out", "OUT/t.csv"], "needs a folder"),
    (["--attack-budget", "4"], "no attack cell was run at budget 4"),
    (["--attack-budget", "x"], "attack budget must be a positive number or 'measured', got 'x'"),
    (["--attack-budget", "0"], "attack budget must be a positive number or 'measured', got '0'"),
])
def test_report_bad_input_is_one_line_and_writes_nothing(capsys, results, tmp_path, args, needle):
    args = [a.replace("OUT", str(tmp_path / "out")) for a in args]
    code, out, err = run(capsys, ["report", "--results", str(results), "--out", str(tmp_path / "out"), *args])
    assert code == 2 and out == "" and needle in err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_report_refuses_mixed_profiles_unless_one_is_chosen(capsys, mixed):
    code, _, err = run(capsys, ["report", "--results", str(mixed)])
    assert code == 2 and "mix profiles cpu, smoke" in err and err.count("\n") == 1
    code, out, _ = run(capsys, ["report", "--results", str(mixed), "--profile", "cpu", "--table", "II"])
    assert code == 0 and "Profile 'cpu'" in out


def test_report_needs_stored_results(capsys, tmp_path):
    code, _, err = run(capsys, ["report", "--results", str(tmp_path)])
    assert code == 2 and "no results in" in err


def test_figures_happy_path(capsys, results, tmp_path):
    out_dir = tmp_path / "figs"
    code, out, err = run(capsys, ["figures", "--results", str(results), "--out", str(out_dir),
                                  "--figure", "4,pareto", "--attack", "unsplit", "--metric", "masked_mse"])
    assert code == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["fig4_utility.pdf", "fig4_utility.png", "pareto.pdf", "pareto.png"]
    assert len(out.splitlines()) == 4
    code, _, err = run(capsys, ["figures", "--results", str(results), "--out", str(out_dir), "--figure", "6"])
    assert code == 0 and "fig 6 skipped" in err


@pytest.mark.parametrize("args,needle", [
    (["--figure", "7"], "unknown 7"),
    (["--attack", "sdar"], "attack 'sdar' is not in the results"),
    (["--metric", "nosuch"], "metric 'nosuch' is not in the results"),
])
def test_figures_bad_input_is_one_line_and_writes_nothing(capsys, results, tmp_path, args, needle):
    code, out, err = run(capsys, ["figures", "--results", str(results), "--out", str(tmp_path / "figs"), *args])
    assert code == 2 and out == "" and needle in err and err.count("\n") == 1
    assert not (tmp_path / "figs").exists()


def test_report_of_victims_only_needs_no_attack_cell(capsys, tmp_path, tidy):
    root = tmp_path / "victims"
    root.mkdir()
    tidy[tidy["attack"] == "none"].to_parquet(root / "results.parquet", index=False)
    code, out, _ = run(capsys, ["report", "--results", str(root), "--table", "II"])
    assert code == 0 and "Acc. (%)" in out
    code, _, err = run(capsys, ["report", "--results", str(root), "--table", "II", "--attack-budget", "4"])
    assert code == 2 and "no attack cell was run at budget 4" in err


def test_report_and_verify_read_each_attack_at_its_measured_budget(capsys, tmp_path):
    from tests.bench.report.test_budgets import STUDY, UNSPLIT, unsplit_at

    root = tmp_path / "measured"
    root.mkdir()
    records = [r for r in synthetic.records("cpu") if r.cell.attack != "unsplit"] + unsplit_at(UNSPLIT, STUDY)
    from bench.run.store import records_to_table

    records_to_table(records).to_parquet(root / "results.parquet", index=False)
    code, out, _ = run(capsys, ["report", "--results", str(root), "--table", "II", "--attack-budget", "measured"])
    assert code == 0 and f"UnSplit ×{UNSPLIT:g}: masked MSE (min-max) ↑" in out and "each attack at its measured budget" in out
    code, out, _ = run(capsys, ["report", "--results", str(root), "--table", "II"])
    assert code == 0 and "UnSplit" not in out.split("\n\n")[1] and f"stored at ×{UNSPLIT:g}" in out
    code, out, _ = run(capsys, ["verify", "--results", str(root), "--attack-budget", "measured"])
    assert code == 0 and "attacks at each attack's measured budget)" in out.splitlines()[-1]
