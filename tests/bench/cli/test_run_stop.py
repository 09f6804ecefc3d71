"""A stopped ``bench run --jobs 2`` leaves no worker computing: SIGTERM stops it as Ctrl-C does (one
line, exit 143, workers terminated, finished cells stored), and workers of a driver killed outright
(SIGKILL) exit by themselves."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.run.store import ResultStore

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads child processes from /proc")
MANY_CELLS = ",".join(str(seed) for seed in range(60))  # far more than the test waits for


def children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found |= {int(child) for child in text}
    return found


def alive(pid: int) -> bool:
    """Running or sleeping (a zombie waiting to be reaped counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.fixture
def started():
    """The drivers and workers a test starts, killed at teardown whatever the test's outcome."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def start_grid(tmp_path, started):
    out = tmp_path / "out"
    command = [sys.executable, "-c", "from bench.cli import main; main()", "run", "--dataset", "digits", "--profile", "smoke",
               "--defense", "raw", "--attack", "none", "--seeds", MANY_CELLS, "--jobs", "2", "--quiet",
               "--out", str(out), "--data-root", str(tmp_path), "--no-download"]
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "OMP_NUM_THREADS": "1"})
    started.append(driver.pid)
    deadline = time.time() + 120
    while not any((out / "cells").glob("*.json")):  # nothing while the folder is missing
        assert driver.poll() is None, driver.communicate()
        assert time.time() < deadline, "no cell stored in 120 s"
        time.sleep(0.2)
    workers = children(driver.pid)
    started.extend([driver.pid, *workers])
    assert len(workers) >= 2
    return driver, workers, out


def wait_gone(pids: set[int], seconds: float) -> set[int]:
    deadline = time.time() + seconds
    while time.time() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.2)
    return {pid for pid in pids if alive(pid)}


def test_sigterm_stops_the_workers_keeps_the_stored_cells_and_says_so_in_one_line(tmp_path, started):
    driver, workers, out = start_grid(tmp_path, started)
    driver.send_signal(signal.SIGTERM)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 128 + signal.SIGTERM
    assert err.strip().splitlines()[-1].startswith(f"stopped by SIGTERM: the cells that ended are stored in {out}")
    assert wait_gone(workers, 5) == set()
    stored = ResultStore(out).records()
    assert 1 <= len(stored) < 60 and all(record.status == "ok" for record in stored)


def test_workers_of_a_killed_driver_exit_by_themselves(tmp_path, started):
    driver, workers, _ = start_grid(tmp_path, started)
    driver.kill()
    driver.communicate(timeout=60)
    assert wait_gone(workers, 10) == set()
