"""The notebook API (``bench.api``): the README's example, run as written, and its bad input."""
import runpy
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.figure import Figure

from bench import api
from bench.errors import GridError
from bench.run.grid import GridSpec

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "notebook.py"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The example's globals after one run into a fresh folder."""
    out = tmp_path_factory.mktemp("notebook")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NOTEBOOK_OUT", str(out))
        namespace = runpy.run_path(str(EXAMPLE), run_name="__main__")
    yield namespace, out
    plt.close(namespace["fig"])


def test_example_is_notebook_sized():
    assert len(EXAMPLE.read_text().splitlines()) <= 15


def test_example_runs_the_grid_and_renders_a_table_and_the_pareto_figure(example):
    namespace, out = example
    df = namespace["df"]
    assert isinstance(df, pd.DataFrame) and set(df["defense"]) == {"raw", "lightsplit-f"}
    assert (df["status"] == "ok").all() and {"accuracy", "ssim", "lpips"} <= set(df["metric"])
    assert isinstance(namespace["fig"], Figure) and (out / "pareto.png").stat().st_size > 0
    assert (out / "results.parquet").exists() and len(list((out / "cells").glob("*.json"))) == 2
    text = api.table(df, "II", fmt="markdown")
    assert text.startswith("**Table II") and "| digits | LightSplit-F | 8× |" in text
    assert api.table(df, "ii", fmt="csv").splitlines()[0].startswith("dataset,defense,cr")


def test_a_rerun_reads_what_is_stored(example):
    namespace, out = example
    before = {p: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")}
    spec = GridSpec(datasets=("digits",), defenses=("raw", "lightsplit-f"), seeds=(0,), profile="smoke",
                    knobs={"cr": (8,)}, attacks=("fora",))
    again = api.run(spec, out=out)
    assert {p: p.stat().st_mtime_ns for p in (out / "cells").glob("*.json")} == before
    key = ["cell_id", "metric"]
    pd.testing.assert_frame_equal(again.sort_values(key).reset_index(drop=True),
                                  namespace["df"].sort_values(key).reset_index(drop=True))
    assert len(api.load(out)) == len(again)


def test_a_bad_grid_raises_before_anything_is_written(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(GridError, match="unknown defense 'nosuch'"):
        api.run({"dataset": "digits", "defense": "nosuch", "seeds": [0], "profile": "smoke"}, out=out)
    with pytest.raises(GridError, match="unknown key 'defence'"):
        api.run({"dataset": "digits", "defence": "raw", "seeds": [0]}, out=out)
    with pytest.raises(ValueError, match="no such file"):
        api.run({"dataset": "digits", "defense": "raw", "seeds": [0]}, out=out, lpips_weights=tmp_path / "nosuch.pth")
    assert not out.exists()


def test_bad_names_and_empty_folders(example, tmp_path):
    df = example[0]["df"]
    with pytest.raises(ValueError, match="unknown table 'IX'"):
        api.table(df, "IX")
    with pytest.raises(ValueError, match="unknown format 'html'"):
        api.table(df, "II", fmt="html")
    with pytest.raises(ValueError, match="unknown figure '4'"):
        api.figure(df, "4")
    with pytest.raises(FileNotFoundError, match="no results in"):
        api.load(tmp_path)


def test_a_saved_pdf_is_byte_identical_from_the_same_results(example, tmp_path):
    df = example[0]["df"]
    for name in ("a.pdf", "b.pdf"):
        plt.close(api.figure(df, "pareto", path=tmp_path / name))
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()
