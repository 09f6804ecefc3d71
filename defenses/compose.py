"""Build a defense from its name: a base defense followed by payload transforms (``lightsplit-f+dp``)."""
from __future__ import annotations

from typing import Any

from torch import Tensor, nn

from defenses.base import DEFENSES, PAYLOAD_TRANSFORMS, Defense, DefenseConfigError
from defenses.payload import Payload


class ComposedDefense(Defense):
    """A base defense whose payload is further transformed on the client (e.g. by DP noise).

    The server decodes with the base defense; the transforms add no server-side state.
    """

    def __init__(self, base: Defense, transforms: list[nn.Module]) -> None:
        super().__init__(cut_shape=base.cut_shape, seed=base.seed)
        self.base = base
        self.client_side.transforms = nn.ModuleList(transforms)
        self.knobs = tuple(dict.fromkeys(base.knobs + tuple(k for t in transforms for k in t.knobs)))

    def encode(self, z: Tensor) -> Payload:
        payload = self.base.encode(z)
        for transform in self.client_side.transforms:
            payload = transform(payload)
        return payload

    def decode(self, payload: Payload) -> Tensor:
        return self.base.decode(payload)

    def client_loss(self, payload: Payload, y: Tensor) -> Tensor:
        return self.base.client_loss(payload, y)

    def public_state(self) -> dict[str, Tensor]:
        return self.base.public_state()

    def client_parameters(self) -> list[nn.Parameter]:
        return self.base.client_parameters() + list(self.client_side.parameters())

    def server_parameters(self) -> list[nn.Parameter]:
        return self.base.server_parameters()


def split_name(name: str) -> tuple[str, list[str]]:
    """``"lightsplit-f+dp"`` → ``("lightsplit-f", ["dp"])``; a lone transform gets the raw base."""
    parts = [p.strip() for p in name.split("+")]
    if not all(parts):
        raise DefenseConfigError(f"malformed defense name '{name}'")
    if parts[0] in PAYLOAD_TRANSFORMS and parts[0] not in DEFENSES:
        parts = ["raw"] + parts
    base, transforms = parts[0], parts[1:]
    DEFENSES.get(base)
    for t in transforms:
        PAYLOAD_TRANSFORMS.get(t)
    return base, transforms


def knobs_of(name: str) -> tuple[str, ...]:
    """The cell parameters a (possibly composed) defense reads."""
    base, transforms = split_name(name)
    knobs = DEFENSES.get(base).knobs + tuple(k for t in transforms for k in PAYLOAD_TRANSFORMS.get(t).knobs)
    return tuple(dict.fromkeys(knobs))


def build_defense(name: str, *, cut_shape: tuple[int, ...], seed: int, **params: Any) -> Defense:
    """Instantiate ``name`` at a cut; ``params`` may hold every knob, each part takes its own.

    Raises:
        RegistryError: for an unknown part.
        DefenseConfigError: when a parameter cannot be realised at this cut.
    """
    base_name, transform_names = split_name(name)
    base_cls = DEFENSES.get(base_name)
    base = base_cls(cut_shape=cut_shape, seed=seed, **{k: params[k] for k in base_cls.knobs if k in params})
    if not transform_names:
        return base
    transforms = []
    for t in transform_names:
        cls = PAYLOAD_TRANSFORMS.get(t)
        transforms.append(cls(**{k: params[k] for k in cls.knobs if k in params}))
    return ComposedDefense(base, transforms)
