"""The victim interface: a model split at a named cut into head, backbone and tail.

In U-shaped split learning the client keeps ``head`` and ``tail`` and the server runs ``backbone``;
in vanilla split learning the server runs ``backbone`` and ``tail``. ``tail(backbone(head(x)))`` is the
whole model.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from bench.registry import Registry


@dataclass
class SplitParts:
    """The three parts of a victim at one cut.

    Attributes:
        head: client layers before the cut; outputs the cut activation ``z`` of shape ``cut_shape``.
        backbone: server layers after the cut.
        tail: the last layers, producing logits (client-owned in U-shaped SL).
        cut_shape: shape of ``z`` per sample, ``(C, H, W)`` for feature maps, ``(d,)`` for vectors,
            ``(T, d)`` for a sequence of ``T`` token states.
        init: how the parameters were initialised (``fresh``, or where pretrained weights came from).
    """

    head: nn.Module
    backbone: nn.Module
    tail: nn.Module
    cut_shape: tuple[int, ...]
    init: str = "fresh"


class Victim(ABC):
    """A model family with named cut points.

    Subclasses set ``cuts`` (cut name → cut shape per sample, for the default input shape),
    ``default_cut``, ``input_shape`` and ``datasets`` (the datasets it is the default victim of:
    :func:`default_victim`; another victim may still be run on them with ``--victim``), and
    implement :meth:`build`. A sequence model sets ``per_token``: its cut is ``(T, d)`` and every
    defense acts on each token's ``d`` values alone. ``requires`` names an optional package the victim
    needs (checked before a grid runs).
    """

    cuts: dict[str, tuple[int, ...]]
    default_cut: str
    input_shape: tuple[int, ...]
    datasets: tuple[str, ...] = ()
    per_token: bool = False
    requires: str | None = None

    @abstractmethod
    def build(self, *, cut: str, num_classes: int, input_shape: tuple[int, ...]) -> SplitParts:
        """Build freshly initialised parts split at ``cut``.

        Raises:
            ValueError: for an unknown cut, or an input shape the victim cannot take.
        """

    def check_cut(self, cut: str) -> None:
        if cut not in self.cuts:
            raise ValueError(
                f"victim {type(self).__name__} has no cut '{cut}' (known: {', '.join(self.cuts)})"
            )


VICTIMS: Registry[type[Victim]] = Registry("victim")


def dry_run_shape(victim: str, head: Callable[[int], nn.Module], input_shape: tuple[int, ...]) -> tuple[int, ...]:
    """Per-sample output shape of ``head(in_channels)`` on ``input_shape``, from a dry run on meta tensors
    (shapes only: no memory, no compute, no draw from the global RNG).

    Raises:
        ValueError: for an input that is not ``(C, H, W)`` or that the layers cannot take (named after ``victim``).
    """
    if len(input_shape) != 3:
        raise ValueError(f"{victim} needs a (C, H, W) input shape, got {input_shape}")
    with torch.device("meta"):
        try:
            return tuple(head(input_shape[0])(torch.empty(1, *input_shape)).shape[1:])
        except RuntimeError as err:
            raise ValueError(f"{victim} cannot take input shape {input_shape}: {err}") from None


def default_victim(dataset: str) -> str:
    """The registered victim that declares ``dataset`` among its ``datasets``: the one a grid trains on
    it unless told otherwise.

    Raises:
        ValueError: no registered victim declares ``dataset``, or more than one does.
    """
    claims = [name for name in VICTIMS.names() if dataset in VICTIMS.get(name).datasets]
    if len(claims) != 1:
        found = f"victims {', '.join(claims)} all declare it" if claims else "no registered victim declares it"
        raise ValueError(f"no default victim for dataset '{dataset}' ({found})")
    return claims[0]
