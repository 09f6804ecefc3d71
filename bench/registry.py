"""Name → factory registries, filled by decorators, Python entry points and plugin files.

Example:
    >>> from bench.registry import Registry
    >>> shapes = Registry("shape")
    >>> @shapes.register("square")
    ... class Square: ...
    >>> shapes.get("square") is Square
    True
"""
from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


class RegistryError(KeyError):
    """An unknown or duplicate registry name."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0])


class Registry(Generic[T]):
    """A registry of named factories of one kind (defense, attack, victim, dataset).

    Args:
        kind: what the registry holds, used in error messages.
        group: the entry-point group packages register under (default ``splitbench.<kind>s``).
    """

    def __init__(self, kind: str, *, group: str | None = None) -> None:
        self.kind = kind
        self.group = group or f"splitbench.{kind}s"
        self._items: dict[str, T] = {}
        self._entry_points_loaded = False

    def register(self, name: str, *, force: bool = False) -> Callable[[T], T]:
        """Decorator that registers ``obj`` under ``name``; refuses duplicates unless ``force``."""

        def decorator(obj: T) -> T:
            if name in self._items and not force and self._items[name] is not obj:
                raise RegistryError(f"{self.kind} '{name}' is already registered")
            self._items[name] = obj
            return obj

        return decorator

    def get(self, name: str) -> T:
        self._load_entry_points()
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise RegistryError(f"unknown {self.kind} '{name}' (known: {known})") from None

    def names(self) -> list[str]:
        self._load_entry_points()
        return sorted(self._items)

    def __contains__(self, name: str) -> bool:
        self._load_entry_points()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        for ep in entry_points(group=self.group):
            obj = ep.load()
            if ep.name not in self._items:
                self._items[ep.name] = obj


def load_plugin(path: str | Path) -> None:
    """Import a user's Python file so that its ``@register`` decorators run (once per process).

    Raises:
        FileNotFoundError: when the file does not exist.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"plugin file not found: {path}")
    module_name = f"splitbench_plugin_{path.stem}"
    loaded = sys.modules.get(module_name)
    if loaded is not None and Path(getattr(loaded, "__file__", "")).resolve() == path.resolve():
        return  # already imported in this process: its registrations stand
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
