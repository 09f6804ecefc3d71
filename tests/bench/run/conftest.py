"""Fixtures of the fault-injection tests (tests/bench/run/test_faults_*.py)."""
import shutil

import pytest

from tests.bench.run.faults import RUN


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A folder holding one utility cell (raw, seed 0), run once per module (tests copy it)."""
    from bench.cli import main

    out = tmp_path_factory.mktemp("stored") / "out"
    try:
        main.main([*RUN, "--out", str(out)], prog_name="bench")
    except SystemExit as exc:
        assert exc.code == 0
    return out


@pytest.fixture
def out(stored, tmp_path):
    """A copy of :func:`stored` to damage."""
    copy = tmp_path / "out"
    shutil.copytree(stored, copy)
    return copy
