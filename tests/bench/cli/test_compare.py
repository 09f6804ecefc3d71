"""A user's defense plugin through `bench compare`, including one that raises."""
import json
from pathlib import Path

import pandas as pd

from tests.bench.cli.runner import run_cli

REPO = Path(__file__).resolve().parents[3]
SMOKE = ["--profile", "smoke", "--seeds", "0", "--cr", "8", "--dataset", "digits", "--quiet"]

BROKEN = '''
from defenses.base import DEFENSES
from defenses.knobs import CR
from defenses.raw import RawDefense


@DEFENSES.register("broken-defense", force=True)
class Broken(RawDefense):
    knobs = (CR,)

    def __init__(self, *, cut_shape, cr=None, seed=0):
        super().__init__(cut_shape=cut_shape, seed=seed)

    def encode(self, z):
        raise RuntimeError("this defense is broken on purpose")
'''


def test_example_plugin_goes_through_compare_and_reuses_stored_baselines(capsys, tmp_path):
    baseline = tmp_path / "baseline"
    code, _, err = run_cli(capsys, ["run", "--defense", "lightsplit-f", "--attack", "decoder-ref", "--out", str(baseline), *SMOKE])
    assert code == 0, err
    out = tmp_path / "cmp"
    args = ["compare", "--plugin", str(REPO / "examples" / "random_subsample.py"), "--defense", "random-subsample",
            "--baseline-results", str(baseline), "--out", str(out), *SMOKE]
    code, stdout, err = run_cli(capsys, args)
    assert code == 0, err
    assert "3 cells run, 2 already stored" in stdout  # raw and lightsplit-f came from the baseline
    board = pd.read_csv(out / "leaderboard-decoder-ref.csv")
    assert set(board["defense"]) == {"random-subsample", "raw", "lightsplit-f", "topk", "learned-1x1"}
    assert (out / "leaderboard-decoder-ref.md").read_text().count("| 8 |") == 5


def test_a_plugin_defense_that_raises_is_recorded_and_the_grid_completes(capsys, tmp_path):
    plugin = tmp_path / "broken.py"
    plugin.write_text(BROKEN)
    out = tmp_path / "cmp"
    args = ["compare", "--plugin", str(plugin), "--defense", "broken-defense", "--baseline-results", str(tmp_path / "none"),
            "--out", str(out), *SMOKE]
    code, stdout, _ = run_cli(capsys, args)
    assert code == 1 and "5 cells run" in stdout and "1 failed" in stdout
    records = [json.loads(p.read_text()) for p in (out / "cells").glob("*.json")]
    failed = [r for r in records if r["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["cell"]["defense"] == "broken-defense"
    assert "broken on purpose" in failed[0]["error"] and "Traceback" in failed[0]["error"]
    assert sum(r["status"] == "ok" for r in records) == 4


def test_a_plugin_file_that_fails_to_import_is_a_one_line_error(capsys, tmp_path):
    plugin = tmp_path / "bad.py"
    plugin.write_text("raise ImportError('missing dependency')\n")
    code, _, err = run_cli(capsys, ["compare", "--plugin", str(plugin), "--defense", "x", "--out", str(tmp_path / "o")])
    assert code == 2 and "failed to import" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_a_plugin_with_a_knob_of_its_own_is_swept_by_compare(capsys, tmp_path):
    """examples/noisy_projection.py declares `noise`; compare crosses it with no change to the suite."""
    out = tmp_path / "cmp"
    args = ["compare", "--plugin", str(REPO / "examples" / "noisy_projection.py"), "--defense", "noisy-projection",
            "--knob", "noise=0,0.5", "--baseline-results", str(tmp_path / "none"), "--out", str(out), *SMOKE]
    code, stdout, err = run_cli(capsys, args)
    assert code == 0, err
    assert "6 cells run" in stdout  # noisy-projection at two noise levels, raw, lightsplit-f, topk, learned-1x1
    records = [json.loads(p.read_text()) for p in (out / "cells").glob("*.json")]
    mine = [r for r in records if r["cell"]["defense"] == "noisy-projection"]
    assert sorted(r["knobs"]["defense"]["noise"] for r in mine) == [0.0, 0.5]
    assert sorted(r["cell"]["defense_knobs"]["noise"] for r in mine) == [0.0, 0.5]  # neither is the default 0.1
    board = pd.read_csv(out / "leaderboard-decoder-ref.csv")
    assert {"noisy-projection (noise=0)", "noisy-projection (noise=0.5)"} <= set(board["defense"])
    # the default is left out of the id: the same grid without --knob names no noise on the cell (the
    # built-in cells are the first run's, reused rather than trained again)
    code, _, err = run_cli(capsys, [*args[:5], "--baseline-results", str(out), "--out", str(tmp_path / "d"), *SMOKE])
    assert code == 0, err
    default = [json.loads(p.read_text()) for p in (tmp_path / "d" / "cells").glob("*.json")]
    default = [r for r in default if r["cell"]["defense"] == "noisy-projection"]
    assert len(default) == 1 and "noise" not in default[0]["cell"]["defense_knobs"]
    assert default[0]["knobs"]["defense"]["noise"] == 0.1
