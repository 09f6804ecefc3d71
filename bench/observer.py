"""What the server sees at the cut each training step, and the hook attacks use to watch it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from torch import Tensor, nn

from defenses.base import Defense
from defenses.payload import Payload


@dataclass(frozen=True)
class ServerHandle:
    """The server's own live modules, as the server holds them during training.

    Co-training attacks may run them (e.g. SDAR trains its simulator through the current backbone)
    but must not change them: the engine checks nothing here, the non-interference tests do.
    """

    backbone: nn.Module
    defense: Defense


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
        server: the server's live modules.
    """

    step: int
    epoch: int
    client: int
    payload: Payload
    grad: Tensor
    labels: Tensor | None
    server: ServerHandle | None = None


class CutObserver(Protocol):
    """Called by the engine after the server's backward pass of every step, inside a forked RNG
    state so that whatever randomness it draws cannot change the victim's training."""

    def on_step(self, view: CutView) -> None: ...


class ActiveServer(Protocol):
    """A malicious server: chooses the gradient the client receives at the cut (e.g. FSHA)."""

    def client_gradient(self, view: CutView) -> Tensor:
        """The gradient to send instead of ``view.grad``; same shape as the payload's values."""
        ...
