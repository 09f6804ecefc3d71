"""What the server sees at the cut each training step, and the hook attacks use to watch it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from torch import Tensor

from defenses.payload import Payload


@dataclass(frozen=True)
class CutView:
    """One step as the server sees it.

    Attributes:
        step: global training step (0-based).
        epoch: training epoch.
        client: index of the client taking this turn.
        payload: the received payload (detached).
        grad: gradient of the loss with respect to the payload's values, which the server sends
            back (detached).
        labels: the batch labels, only in vanilla SL where the server holds them; else ``None``.
    """

    step: int
    epoch: int
    client: int
    payload: Payload
    grad: Tensor
    labels: Tensor | None


class CutObserver(Protocol):
    """Called by the engine after the server's backward pass of every step."""

    def on_step(self, view: CutView) -> None: ...
