"""Load a script of ``benchmarks/`` as a module, for the tests of its functions."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_benchmark_script(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module named ``<name>_script``, run with ``benchmarks/`` on the
    import path (as ``python benchmarks/<name>.py`` runs it: scripts import siblings such as
    ``stored_sdar_cells``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(BENCHMARKS))
        spec = importlib.util.spec_from_file_location(f"{name}_script", BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module
