"""Attacks on the cut layer; importing this package registers every built-in attack."""
from bench.registry import Registry

ATTACKS: Registry = Registry("attack")

__all__ = ["ATTACKS"]
