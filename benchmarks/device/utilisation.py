"""GPU utilisation and cells per minute against the number of workers sharing one GPU."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

from commands import REPO, call
from pending import PendingItem


def sample_gpu(stop: threading.Event, samples: list[tuple[float, float]]) -> None:
    """Append (utilisation %, memory MiB) of GPU 0 every second until ``stop``; nothing without nvidia-smi."""
    if shutil.which("nvidia-smi") is None:
        return
    while not stop.wait(1.0):
        out = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu,memory.used", "--format=csv,noheader,nounits",
                              "-i", "0"], capture_output=True, text=True).stdout.strip()
        try:
            busy, memory = (float(v) for v in out.split(","))
        except ValueError:
            continue
        samples.append((busy, memory))


def measure_utilisation(item: PendingItem, bench: list[str], data: Path, device: str, deadline: float, into: Path,
                        env: dict) -> int:
    """For each worker count of ``item``: run ``item.grid``'s cells into a scratch folder for
    ``item.seconds_each`` seconds while sampling the GPU; write per count the cells finished per
    minute and the mean and peak utilisation to ``into`` (JSON), after each count."""
    results = []
    for workers in item.workers:
        if time.time() + item.seconds_each + 30 > deadline:
            break
        scratch = Path(f"/tmp/kit-utilisation/{workers}")
        shutil.rmtree(scratch, ignore_errors=True)
        samples: list[tuple[float, float]] = []
        stop = threading.Event()
        sampler = threading.Thread(target=sample_gpu, args=(stop, samples), daemon=True)
        sampler.start()
        started = time.time()
        cmd = [*bench, "run", "--config", str(REPO / item.grid), "--out", str(scratch), "--device", device,
               "--jobs", str(workers), "--data-root", str(data), "--time-budget", str(item.seconds_each), "--quiet"]
        call(cmd, env, item.seconds_each + 30, Path(os.devnull))
        elapsed = time.time() - started
        stop.set()
        sampler.join()
        finished = len(list((scratch / "cells").glob("*.json"))) if (scratch / "cells").is_dir() else 0
        busy = [s[0] for s in samples]
        results.append({"workers": workers, "seconds": round(elapsed, 1), "cells": finished,
                        "cells_per_minute": round(60 * finished / elapsed, 2),
                        "gpu_util_mean": round(sum(busy) / len(busy), 1) if busy else None,
                        "gpu_util_peak": max(busy) if busy else None,
                        "gpu_memory_mib_peak": max(s[1] for s in samples) if samples else None})
        into.write_text(json.dumps(results, indent=1) + "\n")
    return 0
