import json

import pandas as pd
import pytest

from tests.bench.cli.runner import run_cli

SMOKE = ["run", "--dataset", "digits", "--profile", "smoke", "--quiet", "--no-download"]


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["--defense", "nosuch"], "unknown defense 'nosuch'"),
        (["--defense", "lightsplit-f+nosuch"], "unknown payload transform 'nosuch'"),
        (["--attack", "nosuch"], "unknown attack 'nosuch'"),
        (["--victim", "nosuch"], "unknown victim 'nosuch'"),
        (["--dataset", "nosuch"], "unknown dataset 'nosuch'"),
        (["--defense", "lightsplit-f", "--cr", "7"], "no integer k >= 1"),
        (["--defense", "lightsplit-f", "--cr", "5000"], "no integer k >= 1"),
        (["--lambda-wcc", "-0.1"], "--lambda-wcc must be >= 0"),
        (["--defense", "dp", "--sigma", "-1"], "knob sigma must be >= 0"),
        (["--defense", "lightsplit-l", "--knob", "width=0"], "knob width must be >= 1"),
        (["--defense", "lightsplit-l", "--knob", "width=wide"], "width takes int values"),
        (["--knob", "nosuch=1"], "no defense or attack of the grid reads knob 'nosuch'"),
        (["--knob", "cr"], "is not NAME=V1,V2"),
        (["--cr", "8", "--knob", "cr=16"], "knob 'cr' is named twice"),
        (["--attack", "decoder-ref", "--attack-budget", "0"], "knob budget must be > 0"),
        (["--attack-budget", "2"], "no defense or attack of the grid reads knob 'budget'"),
        (["--attack", "har-recon"], "attack har-recon applies to tabular data, not image data"),
        (["--seeds", ""], "seed list is empty"),
        (["--seeds", "a,b"], "--seeds"),
        (["--profile", "huge"], "unknown profile 'huge'"),
        (["--cut", "split-9"], "no cut 'split-9'"),
        (["--partition", "dirichlet"], "needs --alpha > 0"),
        (["--alpha", "0.5"], "an iid partition takes none"),
        (["--device", "gpu"], "device 'gpu' is not one of auto, cpu, cuda, cuda:N"),
        (["--time-budget", "0"], "--time-budget"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(capsys, tmp_path, extra, needle):
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(capsys, SMOKE + ["--out", str(out)] + extra)
    assert code == 2
    assert needle in stderr
    assert len(stderr.strip().splitlines()) == 1 and stderr.startswith("error: ")
    assert not out.exists()


def test_missing_data_is_one_line_naming_the_files(capsys, tmp_path):
    out = tmp_path / "out"
    args = ["run", "--dataset", "mnist", "--data-root", str(tmp_path / "empty"), "--no-download", "--out", str(out)]
    code, _, stderr = run_cli(capsys, args)
    assert code == 2 and "t10k-images-idx3-ubyte" in stderr and len(stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_list_shows_every_registry(capsys):
    code, stdout, _ = run_cli(capsys, ["list"])
    assert code == 0
    for name in ("lightsplit-f", "lightsplit-l", "block-local", "topk", "learned-1x1", "dp", "mnistnet", "har", "smoke"):
        assert name in stdout
    sdar = stdout[stdout.index("  sdar "):stdout.index("  unsplit ")]  # its measured budgets, from its class
    assert "measured budget ×16 on cpu mnist mnistnet/split-2 (unknown)" in sdar


def test_list_says_where_each_dataset_was_found(capsys, tmp_path):
    (tmp_path / "cifar10-jpeg" / "test" / "cat").mkdir(parents=True)
    code, stdout, _ = run_cli(capsys, ["list", "--data-root", str(tmp_path)])
    lines = {line.split()[0]: line for line in stdout.splitlines() if line.startswith("  ")}
    assert code == 0
    assert f"found in {tmp_path / 'cifar10-jpeg'}" in lines["cifar10-jpeg"]
    assert "needs no files" in lines["digits"]
    assert "not found (looked under" in lines["imagenet"] and str(tmp_path) in lines["imagenet"]


def test_run_stores_tidy_rows_and_skips_stored_cells(capsys, tmp_path):
    out = tmp_path / "out"
    args = SMOKE + ["--defense", "lightsplit-f", "--cr", "8", "--seeds", "0", "--out", str(out)]
    code, stdout, _ = run_cli(capsys, args)
    assert code == 0, stdout
    assert "2 cells run" in stdout  # lightsplit-f and its matched raw cell
    table = pd.read_parquet(out / "results.parquet")
    assert set(table["defense"]) == {"raw", "lightsplit-f"}
    assert {"accuracy", "accuracy_delta_vs_raw", "bytes_up_per_sample", "bytes_down_per_epoch"} <= set(table["metric"])
    for column in ("seed", "profile", "code_version", "version_torch", "wall_seconds", "status", "data_source"):
        assert column in table.columns
    up = table[table["metric"] == "bytes_up_per_sample"].set_index("defense")["value"]
    assert up["raw"] / up["lightsplit-f"] == 8
    assert (pd.read_csv(out / "results.csv")["metric"] == table["metric"]).all()
    record = json.loads(next((out / "cells").glob("*.json")).read_text())
    assert record["status"] == "ok" and record["provenance"]["code_version"]

    code, stdout, _ = run_cli(capsys, args)
    assert "0 cells run, 2 already stored" in stdout


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has a GPU")
def test_a_gpu_asked_for_on_a_machine_without_one_is_one_line_exit_2_and_writes_nothing(capsys, tmp_path):
    out = tmp_path / "out"
    code, _, stderr = run_cli(capsys, SMOKE + ["--out", str(out), "--device", "cuda"])
    assert code == 2 and "no CUDA GPU" in stderr and "--device cpu" in stderr
    assert len(stderr.strip().splitlines()) == 1 and not out.exists()
