"""Victim models with named cut points; importing this package registers every built-in victim."""
from victims import gpt2, har_mlp, micronnet, mnistnet, mobilenet, resnet18, resnet50, simple_cnn  # noqa: F401  (registers)
from victims.base import VICTIMS, SplitParts, Victim, default_victim

__all__ = ["VICTIMS", "SplitParts", "Victim", "default_victim"]
