"""``bench run`` on text: the README's command, the inflation ratio, and one-line refusals."""
import importlib.util

import pandas as pd
import pytest

from tests.bench.cli.runner import run_cli

pytest.importorskip("transformers")

from tests.bench.run.test_lm_training import write_corpus  # noqa: E402


def _args(tmp_path, *extra):
    return ["run", "--dataset", "wikitext-2", "--victim", "gpt2", "--cut", "tiny", "--profile", "smoke", "--quiet",
            "--data-root", str(tmp_path / "data"), "--out", str(tmp_path / "out"), *extra]


def test_missing_transformers_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "transformers" else real(name, *a))
    code, _, stderr = run_cli(capsys, _args(tmp_path, "--defense", "raw"))
    assert code == 2
    assert stderr.strip() == "error: victim 'gpt2' needs the 'transformers' package: pip install 'splitbench[text]'"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("extra,needle", [
    (["--attack", "sdar"], "attack 'sdar' does not run on victim 'gpt2'"),
    (["--lambda-wcc", "0.1"], "trains one client without WCC"),
    (["--defense", "lightsplit-f", "--cr", "5"], "no integer k >= 1 at a cut of d=32"),
    (["--cut", "huge"], "no cut 'huge'"),
])
def test_text_grid_refusals_are_one_line(capsys, tmp_path, extra, needle):
    code, _, stderr = run_cli(capsys, _args(tmp_path, *(["--defense", "raw"] if "--defense" not in extra else []), *extra))
    assert code == 2 and needle in stderr and len(stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_readme_command_stores_perplexity_and_its_inflation_over_raw(capsys, tmp_path):
    write_corpus(tmp_path / "data")
    code, _, stderr = run_cli(capsys, _args(tmp_path, "--defense", "raw,lightsplit-f", "--cr", "8"))
    assert code == 0, stderr
    table = pd.read_parquet(tmp_path / "out" / "results.parquet")
    ppl = table[table.metric == "best_val_perplexity"].set_index("defense")["value"]
    inflation = table[table.metric == "perplexity_inflation"].set_index("defense")["value"]
    assert set(ppl.index) == {"raw", "lightsplit-f"}
    assert inflation["lightsplit-f"] == pytest.approx(ppl["lightsplit-f"] / ppl["raw"])
    assert table["version_transformers"].iloc[0] != "absent"
