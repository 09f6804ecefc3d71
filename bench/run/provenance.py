"""Provenance recorded with every result: code version, library versions, machine.

The same seed gives the same numbers only on the same kind of processor: torch picks its kernels (and
so their rounding) by the CPU's instruction set, so a cell rerun on another machine differs in the
low digits at first and, after training, in the measurements (results/README.md, issue 13).
"""
from __future__ import annotations

import functools
import os
import platform
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import torch

from bench.run.git_describe import describe

LIBRARIES = (
    "torch", "torchvision", "numpy", "pandas", "scikit-learn", "piq", "lpips", "transformers", "tokenizers", "splitbench",
)


@functools.cache
def code_version() -> str:
    """:func:`describe` of this package's tree; where the tree has no git history (a copy sent to a
    GPU machine), ``$BENCH_CODE_VERSION`` (the device kit sets it to the :func:`describe` of the tree
    it sent), else the installed package version."""
    try:
        return describe(Path(__file__).resolve().parents[2])
    except (OSError, subprocess.SubprocessError):
        return os.environ.get("BENCH_CODE_VERSION") or f"splitbench-{_version('splitbench')}"


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "absent"


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``; ``platform.processor()`` elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


@functools.cache
def environment() -> dict[str, str]:
    """Library versions and the machine, as flat string columns."""
    info = {f"version_{lib.replace('-', '_')}": _version(lib) for lib in LIBRARIES}
    info.update(
        python=platform.python_version(),
        machine=f"{platform.system()} {platform.machine()}",
        cpu=cpu_model(),
        cpu_capability=torch.backends.cpu.get_cpu_capability(),
        torch_threads=str(torch.get_num_threads()),
        code_version=code_version(),
    )
    return info
