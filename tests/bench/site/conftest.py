"""A small stored grid (digits, smoke profile) and the site built from it, made once per session.

Raw and LightSplit-F at CR 8, two seeds, the reference decoder (an image attack, with grids) and the
prior (the floor); the reference decoder also at four times its budget on raw seed 0, so one
convergence verdict is known. Tests that change files work on copies.
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.cli import main
from bench.cli.report import load_results
from bench.report.combine import combine_tables
from bench.site.build import build_site
from tests.bench.site.cdp import Browser, CDPError, find_browser

REPO = Path(__file__).resolve().parents[3]
SMOKE = ["--dataset", "digits", "--profile", "smoke", "--quiet", "--no-download"]
BROWSER = find_browser()
# The browser tests' module mark: skipped, with the reason, where no Chromium-like browser is installed.
NEEDS_BROWSER = pytest.mark.skipif(BROWSER is None, reason="no headless browser: chromium, chromium-browser or "
                                                           "google-chrome not on PATH (apt-get install chromium)")


def bench(args: list[str]) -> None:
    """Run ``bench ARGS`` in this process; fail unless it exits 0."""
    try:
        main.main(args, prog_name="bench")
    except SystemExit as exc:
        assert not exc.code, f"bench {' '.join(args)} exited {exc.code}"


@pytest.fixture(scope="session")
def grid(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("grid") / "smoke-grid"
    bench(["run", *SMOKE, "--defense", "raw,lightsplit-f", "--cr", "8", "--attack", "decoder-ref,prior", "--seeds", "0,1",
           "--out", str(out)])
    bench(["run", *SMOKE, "--defense", "raw", "--attack", "decoder-ref", "--attack-budget", "4", "--seeds", "0", "--out", str(out)])
    return out


@pytest.fixture(scope="session")
def site(grid, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    bench(["site", "--results", str(grid), "--out", str(out)])
    return out


@dataclass(frozen=True)
class CommittedSite:
    """The site of every results folder git tracks (as ``bench site`` builds it) and its entries."""

    folder: Path
    entries: list[dict]


@pytest.fixture(scope="session")
def committed_site(tmp_path_factory) -> CommittedSite:
    """Built once (about 25 CPU-s) for the modules that read it, which share the xdist group
    ``committed-site`` so that one worker builds it."""
    tracked = subprocess.run(["git", "ls-files", "results/*/results.parquet"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    if not tracked:
        pytest.skip("no committed results folders (not a git checkout)")
    table, sources = combine_tables([(str(REPO / Path(p).parent), load_results(REPO / Path(p).parent)) for p in tracked])
    out = tmp_path_factory.mktemp("committed-site") / "site"
    return CommittedSite(out, build_site(table=table, sources=sources, out=out))


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """A headless browser for one test module (tests that use it carry :data:`NEEDS_BROWSER`)."""
    try:
        with Browser(BROWSER, profile=tmp_path_factory.mktemp("chromium-profile")) as opened:
            yield opened
    except CDPError as err:  # an installed browser that cannot start here is a failure, not a skip
        pytest.fail(f"{BROWSER} did not start headless: {err}")


@pytest.fixture
def grid_copy(grid, tmp_path) -> Path:
    return Path(shutil.copytree(grid, tmp_path / "grid", ignore=shutil.ignore_patterns("checkpoints")))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``) every test of the stored grid runs on one worker, so
    the session's grid and site are made once, not once per worker."""
    for item in items:
        if "grid" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("site-grid"))
