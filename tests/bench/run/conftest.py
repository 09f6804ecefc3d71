"""Fixtures of the fault-injection tests (tests/bench/run/test_faults_*.py)."""
import pytest

from tests.bench.cli.runner import copy_of, stored_folder
from tests.bench.run.faults import RUN


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A folder holding one utility cell (raw, seed 0), run once per module (tests copy it)."""
    return stored_folder(tmp_path_factory, RUN)


@pytest.fixture
def out(stored, tmp_path):
    """A copy of :func:`stored` to damage."""
    return copy_of(stored, tmp_path)
