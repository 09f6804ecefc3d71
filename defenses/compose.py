"""Build a defense from its name: a base defense followed by payload transforms (``lightsplit-f+dp``)."""
from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from torch import Tensor, nn

from bench.knobs import Knob, KnobError
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
        self.knobs = _unique(base.knobs + tuple(k for t in transforms for k in t.knobs))
        self.straight_through = base.straight_through

    def encode(self, z: Tensor) -> Payload:
        payload = self.base.encode(z)
        for transform in self.client_side.transforms:
            payload = transform(payload)
        return payload

    def decode(self, payload: Payload) -> Tensor:
        return self.base.decode(payload)

    def cut_map(self, payload: Payload) -> Tensor:
        return self.base.cut_map(payload)

    def calibrate(self, z: Tensor) -> None:
        """Each transform in turn sees the payloads it will transform."""
        self.base.calibrate(z)
        payload = self.base.encode(z)
        for transform in self.client_side.transforms:
            transform.calibrate(payload)
            payload = transform(payload)

    def align_to_observed(self, observed: Payload, simulate: Callable[[], Payload]) -> None:
        """The base defense's offset; the transforms (DP noise) add none on average."""
        self.base.align_to_observed(observed, simulate)

    def client_loss(self, payload: Payload, y: Tensor, *, inputs: Tensor) -> Tensor:
        return self.base.client_loss(payload, y, inputs=inputs)

    def proxy_loss(self, payload: Payload, inputs: Tensor) -> Tensor | None:
        return self.base.proxy_loss(payload, inputs)

    def proxy_parameters(self) -> list[nn.Parameter]:
        return self.base.proxy_parameters()

    def public_state(self) -> dict[str, Tensor]:
        return self.base.public_state()

    def accounting(self, *, epochs: int) -> dict[str, float]:
        out = self.base.accounting(epochs=epochs)
        for transform in self.client_side.transforms:
            out.update(transform.accounting(epochs=epochs))
        return out

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


def knobs_of(name: str) -> tuple[Knob, ...]:
    """The knobs a (possibly composed) defense reads, each once, base first."""
    base, transforms = split_name(name)
    parts = [DEFENSES.get(base)] + [PAYLOAD_TRANSFORMS.get(t) for t in transforms]
    for part in parts:
        if not all(isinstance(k, Knob) for k in part.knobs):
            raise DefenseConfigError(f"{part.__name__} declares knobs that are not bench.knobs.Knob (see defenses.knobs)")
    return _unique(k for part in parts for k in part.knobs)


def build_defense(
    name: str, *, cut_shape: tuple[int, ...], seed: int, per_token: bool = False,
    input_shape: tuple[int, ...] | None = None, **params: Any
) -> Defense:
    """Instantiate ``name`` at a cut; ``params`` may hold every knob, each part takes its own.

    A base defense whose constructor names ``input_shape`` (one that owns a proxy inversion decoder)
    receives the per-sample input shape; building it without one is refused.

    A knob that is not given takes its declared default; a required one that is not given is left
    to the part to refuse. With ``per_token`` the cut is ``(T, d)`` and the defense is built for one
    token's ``(d,)`` and applied to each token (:class:`defenses.per_token.PerTokenDefense`).

    Raises:
        RegistryError: for an unknown part.
        DefenseConfigError: when a parameter is out of its knob's range or cannot be realised at this cut.
    """
    if per_token:
        from defenses.per_token import PerTokenDefense

        inner = build_defense(name, cut_shape=tuple(cut_shape[1:]), seed=seed, input_shape=input_shape, **params)
        return PerTokenDefense(inner, tokens=cut_shape[0])
    base_name, transform_names = split_name(name)
    base_cls = DEFENSES.get(base_name)
    context = {}
    if "input_shape" in inspect.signature(base_cls).parameters:
        if input_shape is None:
            raise DefenseConfigError(f"{base_name} needs the input shape (its proxy decoder reconstructs inputs)")
        context["input_shape"] = tuple(input_shape)
    base = base_cls(cut_shape=cut_shape, seed=seed, **context, **_arguments(base_cls.knobs, params))
    if not transform_names:
        return base
    transforms = [PAYLOAD_TRANSFORMS.get(t) for t in transform_names]
    return ComposedDefense(base, [cls(**_arguments(cls.knobs, params)) for cls in transforms])


def _arguments(knobs: tuple[Knob, ...], params: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for knob in knobs:
        try:
            if knob.name in params and params[knob.name] is not None:
                out[knob.name] = knob.check(params[knob.name])
            elif not knob.required:
                out[knob.name] = knob.default
        except KnobError as err:
            raise DefenseConfigError(str(err)) from None
    return out


def _unique(knobs) -> tuple[Knob, ...]:
    """The first knob of each name, in order."""
    first: dict[str, Knob] = {}
    for knob in knobs:
        first.setdefault(knob.name, knob)
    return tuple(first.values())
