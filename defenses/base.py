"""The Defense interface and the registries of defenses and payload transforms.

A defense sits at the cut: ``encode`` runs on the client and produces the payload that crosses the
wire, ``decode`` runs on the server and returns a tensor of the cut shape for the backbone. Its
trainable parameters live in two submodules, ``client_side`` and ``server_side``, so each party's
optimizer and each attacker's knowledge are explicit.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import ClassVar

import torch
from torch import Tensor, nn

from bench.knobs import Knob
from bench.registry import Registry
from defenses.payload import GroupedPayload, Payload, as_vector, nbytes, samples_of, values_of, wire_tensors


class DefenseConfigError(ValueError):
    """A defense parameter that cannot be realised at this cut (one-line message)."""


class Defense(nn.Module):
    """Base class of every cut-layer defense.

    Subclasses declare ``knobs``: the settings they read (:class:`bench.knobs.Knob`; the shared
    ones are in :mod:`defenses.knobs`), so the grid crosses only those; each is a keyword argument
    of the constructor.

    Args:
        cut_shape: per-sample shape of the cut activation ``z``.
        seed: seed of any fixed randomness (e.g. the projection matrix).
    """

    knobs: ClassVar[tuple[Knob, ...]] = ()
    # True where ``encode`` passes no gradient to some of its inputs (top-K's support): an attacker's
    # own simulated passes then use a straight-through estimator (:meth:`attacker_encode`).
    straight_through: bool = False

    def __init__(self, *, cut_shape: tuple[int, ...], seed: int = 0) -> None:
        super().__init__()
        self.cut_shape = tuple(cut_shape)
        self.seed = seed
        self.client_side = nn.Module()
        self.server_side = nn.Module()

    @property
    def d(self) -> int:
        return math.prod(self.cut_shape)

    def encode(self, z: Tensor) -> Payload:
        """Client side: cut activation ``(B, *cut_shape)`` → payload."""
        raise NotImplementedError

    def decode(self, payload: Payload) -> Tensor:
        """Server side: payload → ``(B, *cut_shape)`` input of the backbone."""
        raise NotImplementedError

    def cut_map(self, payload: Payload) -> Tensor:
        """The cut-shaped map a server computes from ``payload`` with public operations only, what every
        attack reads so that one attacker network serves every defense: by default what the backbone
        receives (``decode``); the projections override it with ``R z̃`` (a learned lift-back is the
        server's own post-processing, and whatever it holds, ``z̃`` holds too)."""
        return self.decode(payload)

    def attacker_encode(self, z: Tensor) -> Payload:
        """``encode`` as an attacker's own simulated pass runs it: the same forward, and where ``encode``
        blocks gradients (:attr:`straight_through`), a dense payload whose gradient is the identity."""
        payload = self.encode(z)
        if not self.straight_through:
            return payload
        flat = z.flatten(1)
        return flat + (as_vector(payload) - flat).detach()

    def calibrate(self, z: Tensor) -> None:
        """Fix any data-dependent constant from cut activations ``z`` measured once before training
        (the DP clip); nothing by default."""

    def align_to_observed(self, observed: Payload, simulate: Callable[[], Payload]) -> None:
        """On an attacker's fresh copy: set client-half state that shifts every payload alike from
        the first moment of payloads the server ``observed`` (``simulate()``: this copy's payloads of
        as many of the attacker's own inputs); nothing by default. A simulator that starts from a
        random guess of such an offset is told apart from the client by its critic at once
        (SDAR against Shredder's trained noise), whatever its other networks learn."""

    def client_loss(self, payload: Payload, y: Tensor, *, inputs: Tensor) -> Tensor:
        """An extra client-side loss on the payload of the input batch ``inputs`` with labels ``y``
        (zero unless a defense defines one); its gradient reaches the head and the client half, never
        the proxy adversary (:meth:`proxy_loss`)."""
        return payload_zero(payload)

    def proxy_loss(self, payload: Payload, inputs: Tensor) -> Tensor | None:
        """The loss the defense's proxy adversary (``client_side.proxy``, e.g. DISCO's or ResSFL's
        inversion decoder) minimises on a detached payload and its inputs, stepped by its own optimizer
        after the client's step; ``None``: the defense has no proxy adversary."""
        return None

    def proxy_parameters(self) -> list[nn.Parameter]:
        """The parameters of the client's proxy adversary (``client_side.proxy``): client-side, so
        never on the server's view, and trained only on :meth:`proxy_loss`."""
        proxy = getattr(self.client_side, "proxy", None)
        return list(proxy.parameters()) if proxy is not None else []

    def public_state(self) -> dict[str, Tensor]:
        """What the server legitimately knows about the defense (e.g. the projection ``R``)."""
        return {}

    def accounting(self, *, epochs: int) -> dict[str, float]:
        """Formal privacy accounting of a run of ``epochs`` training epochs (none by default)."""
        return {}

    def describe(self) -> dict[str, float]:
        """Realised payload size, measured on a probe batch: values and wire bytes per sample, and
        the realised compression ratio (float32 cut bytes / payload wire bytes).

        Bytes per sample are the probe's wire bytes over the samples it stands for. Where one payload
        row stands for ``R`` samples (:class:`~defenses.payload.GroupedPayload`), the probe holds
        ``2R`` samples, so its rows are full as in training at a batch size that ``R`` divides."""
        with torch.no_grad():
            was_training = self.training
            self.eval()
            size = PROBE_SAMPLES
            probe = self.encode(probe_batch(self, size))
            if isinstance(probe, GroupedPayload) and probe.group_size > 1:
                size = PROBE_SAMPLES * probe.group_size
                probe = self.encode(probe_batch(self, size))
            self.train(was_training)
        payload_bytes = nbytes(wire_tensors(probe)) / size
        return {
            "payload_values": values_of(probe).numel() / samples_of(probe),
            "payload_bytes": payload_bytes,
            "realized_cr": 4 * self.d / payload_bytes,
        }

    def client_parameters(self) -> list[nn.Parameter]:
        """What the client's optimizer steps: the client half without its proxy adversary."""
        proxy = {id(p) for p in self.proxy_parameters()}
        return [p for p in self.client_side.parameters() if id(p) not in proxy]

    def server_parameters(self) -> list[nn.Parameter]:
        return list(self.server_side.parameters())

    def server_half(self) -> Defense:
        """This defense as the server holds it: the same live server-side modules, parameters and
        buffers (so ``decode`` follows training), and an empty client half, in this defense and in
        every defense it is built from. Nothing of the client half is reachable from the result."""
        half = copy.copy(self)
        half._parameters = dict(self._parameters)
        half._buffers = dict(self._buffers)
        half._modules = {
            name: nn.Module() if name == "client_side" else module.server_half() if isinstance(module, Defense) else module
            for name, module in self._modules.items()
        }
        return half


class PayloadTransform(nn.Module):
    """A client-side transform of an already encoded payload (DP noise); composes after any defense."""

    knobs: ClassVar[tuple[Knob, ...]] = ()

    def calibrate(self, payload: Payload) -> None:
        """Fix any data-dependent constant from payloads measured once before training; nothing by default."""

    def accounting(self, *, epochs: int) -> dict[str, float]:
        """Formal privacy accounting of a run of ``epochs`` training epochs (none by default)."""
        return {}

    def forward(self, payload: Payload) -> Payload:  # pragma: no cover - interface
        raise NotImplementedError


PROBE_SAMPLES = 2  # samples per payload row in the probe batch that measures a payload's size


def probe_batch(module: nn.Module, size: int = PROBE_SAMPLES) -> Tensor:
    """``size`` seeded Gaussian cut activations on the device of ``module``'s tensors (the CPU if it has none)."""
    tensors = [*module.parameters(), *module.buffers()]
    probe = torch.randn(size, *module.cut_shape, generator=torch.Generator().manual_seed(0), device="cpu")
    return probe.to(tensors[0].device) if tensors else probe


def payload_zero(payload: Payload) -> Tensor:
    return values_of(payload).new_zeros(())


def require_cr(cr: float | None, d: int, name: str) -> int:
    """The payload size ``k = d / cr``, checked to be an integer ≥ 1."""
    if cr is None:
        raise DefenseConfigError(f"{name} needs a compression ratio (--cr)")
    if cr <= 0:
        raise DefenseConfigError(f"{name}: CR must be positive, got {cr:g}")
    k = d / cr
    if k < 1 or abs(k - round(k)) > 1e-9:
        raise DefenseConfigError(f"{name}: CR {cr:g} gives no integer k >= 1 at a cut of d={d} (d/CR={k:g})")
    return int(round(k))


DEFENSES: Registry[type[Defense]] = Registry("defense")
PAYLOAD_TRANSFORMS: Registry[type[PayloadTransform]] = Registry("payload transform", group="splitbench.payload_transforms")
