"""The mutants' shared check: exit 0 only when every collected test fails an assertion."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "from tests.mutants.expect_failure import register\n\ndef pytest_configure(config):\n    register(config, 'probe')\n"
BODIES = {
    "fails": "def test_fails():\n    assert 1 == 2\n",
    "passes": "def test_passes():\n    assert 1 == 1\n",
    "raises": "def test_raises():\n    raise RuntimeError('not an assertion')\n",
    "errors": "import pytest\n\n@pytest.fixture\ndef broken():\n    raise RuntimeError\n\ndef test_errors(broken):\n    assert False\n",
}


def run_probe(tmp_path: Path, *kinds: str) -> subprocess.CompletedProcess:
    (tmp_path / "probe_plugin.py").write_text(PLUGIN)
    for kind in kinds:
        (tmp_path / f"test_{kind}.py").write_text(BODIES[kind])
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "probe_plugin", "-p", "no:cacheprovider", "-q", str(tmp_path)],
                          cwd=tmp_path, env={"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)


def test_every_target_failing_an_assertion_exits_zero(tmp_path):
    done = run_probe(tmp_path, "fails")
    assert done.returncode == 0 and "mutant probe killed: all 1 targets failed" in done.stdout, done.stdout


@pytest.mark.parametrize("survivor", ["passes", "raises", "errors"])
def test_a_target_that_passes_or_fails_without_an_assertion_survives(tmp_path, survivor):
    done = run_probe(tmp_path, "fails", survivor)
    assert done.returncode == 1, done.stdout
    assert "mutant probe SURVIVED 1 of 2 targets" in done.stdout and f"test_{survivor}.py::test_{survivor}" in done.stdout


def test_no_target_collected_fails(tmp_path):
    done = run_probe(tmp_path)
    assert done.returncode == 1 and "no targets ran" in done.stdout, done.stdout
