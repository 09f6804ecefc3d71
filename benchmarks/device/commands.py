"""Running the suite's commands on the GPU machine: from the repository root, killed whole at a timeout."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TIMED_OUT = 124


def call(cmd: list[str], env: dict, timeout: float, output) -> int:
    """Run ``cmd`` in the repository root with its output into ``output`` (an open file or a path);
    its exit status, or :data:`TIMED_OUT` after killing it and every process it started."""
    handle = output.open("w") if isinstance(output, Path) else output
    try:
        process = subprocess.Popen(cmd, stdout=handle, stderr=subprocess.STDOUT, env=env, cwd=REPO, start_new_session=True)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()
            return TIMED_OUT
    finally:
        if isinstance(output, Path):
            handle.close()
