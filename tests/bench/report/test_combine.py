"""Reading several results folders as one: each cell's whole record from the newest code that wrote it."""
from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from bench.cli import main
from bench.report.combine import code_recency, combine_tables, record_age
from bench.run.git_describe import describe

RECENCY = {"aaaaaaaaaaaa": 2, "bbbbbbbbbbbb": 1, "cccccccccccc": 0}  # c is the newest


def rows(cell_id: str, code: str | None, **metrics: float) -> pd.DataFrame:
    return pd.DataFrame([{"cell_id": cell_id, "code_version": code, "metric": m, "value": v} for m, v in metrics.items()])


def value(table: pd.DataFrame, cell_id: str, metric: str) -> float:
    (v,) = table.loc[(table["cell_id"] == cell_id) & (table["metric"] == metric), "value"]
    return v


@pytest.mark.parametrize("order", [("old", "new"), ("new", "old")])
def test_the_newest_codes_record_wins_in_either_order(order):
    folders = {"old": rows("x", "aaaaaaaaaaaa", ssim=0.1), "new": rows("x", "cccccccccccc", ssim=0.9)}
    table, source = combine_tables([(name, folders[name]) for name in order], recency=RECENCY)
    assert value(table, "x", "ssim") == 0.9 and source == {"x": "new"}
    assert len(table) == 1


def test_a_dirty_record_is_newer_than_its_commit_and_older_than_the_next():
    assert record_age("bbbbbbbbbbbb-dirty", RECENCY) < record_age("bbbbbbbbbbbb", RECENCY)
    assert record_age("bbbbbbbbbbbb-dirty", RECENCY) > record_age("cccccccccccc", RECENCY)
    table, source = combine_tables([("clean", rows("x", "bbbbbbbbbbbb", ssim=0.1)),
                                    ("dirty", rows("x", "bbbbbbbbbbbb-dirty", ssim=0.2))], recency=RECENCY)
    assert source == {"x": "dirty"}


@pytest.mark.parametrize("codes", [("zzzzzzzzzzzz", "yyyyyyyyyyyy"), ("bbbbbbbbbbbb", "bbbbbbbbbbbb"), (None, None)])
def test_unknown_or_equal_code_keeps_the_order_given(codes):
    first, second = codes
    table, source = combine_tables([("one", rows("x", first, ssim=0.1)), ("two", rows("x", second, ssim=0.2))],
                                   recency=RECENCY)
    assert source == {"x": "one"} and value(table, "x", "ssim") == 0.1


def test_known_code_beats_unknown_code_wherever_it_is_given():
    _, source = combine_tables([("unknown", rows("x", "zzzzzzzzzzzz", ssim=0.1)),
                                ("known", rows("x", "aaaaaaaaaaaa", ssim=0.2))], recency=RECENCY)
    assert source == {"x": "known"}
    assert record_age("zzzzzzzzzzzz", RECENCY) == math.inf


def test_a_cells_metrics_are_never_mixed_across_folders():
    old = rows("x", "aaaaaaaaaaaa", ssim=0.1, accuracy=0.5)
    new = rows("x", "cccccccccccc", ssim=0.9)  # a record without accuracy: the old one's is not borrowed
    table, _ = combine_tables([("old", old), ("new", new)], recency=RECENCY)
    assert set(table["metric"]) == {"ssim"}


def test_cells_in_one_folder_only_are_all_kept():
    table, source = combine_tables([("a", pd.concat([rows("x", "aaaaaaaaaaaa", ssim=0.1), rows("y", None, ssim=0.3)])),
                                    ("b", rows("z", "cccccccccccc", ssim=0.5))], recency=RECENCY)
    assert source == {"x": "a", "y": "a", "z": "b"} and len(table) == 3


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path) -> tuple[Path, str, str]:
    """A git repository of two commits: (its root, the older commit, the newer)."""
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "older")
    older = git(tmp_path, "rev-parse", "HEAD")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "newer")
    return tmp_path, older, git(tmp_path, "rev-parse", "HEAD")


def test_code_recency_reads_the_history_holding_the_folders(repo, tmp_path_factory):
    root, older, newer = repo
    (root / "results").mkdir()
    recency = code_recency([root / "results"])
    assert recency[newer[:12]] == 0 and recency[older[:12]] == 1 and recency[older[:7]] == 1
    assert code_recency([tmp_path_factory.mktemp("outside-any-history")]) == {}


@pytest.mark.parametrize("version", ["splitbench-0.1.0", "v1.0", "v1.0-dirty"])
def test_a_version_that_names_no_commit_is_unknown(version):
    assert record_age(version, RECENCY) == math.inf


def test_the_code_version_provenance_writes_is_read_with_or_without_a_tag(repo):
    root, older, newer = repo
    recency = code_recency([root])
    assert record_age(describe(root), recency) == 0  # a bare hash
    git(root, "tag", "-a", "v1.0", "-m", "release", older)  # annotated: what `git describe` reads
    tagged = describe(root)
    assert tagged.startswith("v1.0-1-g")
    assert record_age(tagged, recency) == 0 and record_age(tagged + "-dirty", recency) == -0.5
    assert record_age(older[:12], recency) == 1


def test_bench_report_reads_the_newest_record_whatever_the_order(repo, tidy):
    root, older, newer = repo
    stale = tidy.assign(code_version=older[:12])
    stale.loc[stale["metric"] == "ssim", "value"] = 0.0  # an attack since fixed: its old numbers read nothing
    (root / "old").mkdir()
    (root / "new").mkdir()
    stale.to_parquet(root / "old" / "results.parquet")
    tidy.assign(code_version=newer[:12]).to_parquet(root / "new" / "results.parquet")
    runner = CliRunner()
    report = lambda *folders: runner.invoke(  # noqa: E731
        main, ["report", *[a for f in folders for a in ("--results", str(root / f))], "--table", "II"])
    alone, forward, backward = report("new"), report("old", "new"), report("new", "old")
    assert alone.exit_code == 0, alone.output
    assert forward.output == alone.output == backward.output
    assert report("old").output != alone.output
