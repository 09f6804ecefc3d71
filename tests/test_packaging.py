"""What ``pip install .`` puts on the path: the suite's own packages and nothing else."""
from pathlib import Path

import pytest
from setuptools import find_namespace_packages, find_packages

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
SUITE = {"bench", "attacks", "defenses", "victims"}


def installed_packages() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    find = find_namespace_packages if config.get("namespaces", True) else find_packages  # setuptools' default: namespaces
    return find(where=str(ROOT), include=config["include"], exclude=config.get("exclude", ()))


def test_only_the_suites_own_packages_are_installed():
    packages = installed_packages()
    assert {p.split(".")[0] for p in packages} == SUITE
    assert "bench.site" in packages and "bench.run" in packages  # subpackages come along


def test_every_package_directory_of_the_suite_is_installed():
    on_disk = {str(p.parent.relative_to(ROOT)).replace("/", ".") for top in SUITE for p in (ROOT / top).rglob("__init__.py")}
    assert on_disk <= set(installed_packages())
