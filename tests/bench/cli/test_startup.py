"""Commands on stored results never import torch (they read the tidy table only)."""
import subprocess
import sys

import pytest

from bench.run.store import ResultStore
from tests.bench.report import synthetic

PROBE = """
import sys
from bench.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exit:
    assert not exit.code, exit.code
loaded = sorted(m for m in sys.modules if m == "torch" or m.startswith(("attacks", "defenses", "victims")))
print("LOADED:" + ",".join(loaded))
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    store = ResultStore(tmp_path_factory.mktemp("results"))
    for record in synthetic.records():
        store.write(record)
    store.collect()
    return store.root


@pytest.mark.parametrize("command", [
    ["report", "--table", "II"],
    ["verify"],
    ["figures", "--figure", "4"],
])
def test_commands_on_stored_results_do_not_import_torch(results, command, tmp_path):
    args = [*command, "--results", str(results)] + (["--out", str(tmp_path)] if command[0] == "figures" else [])
    out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "LOADED:\n" in out.stdout or out.stdout.rstrip().endswith("LOADED:"), out.stdout[-300:]
