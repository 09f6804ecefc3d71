"""Knobs: the settings a defense or an attack declares (name, type, default, valid range).

A knob is owned by the part that reads it. The grid crosses the values given for it
(``bench run --knob NAME=V1,V2``), each value is parsed and checked here, and a value left at the
knob's default does not enter the cell's id. A knob without a default (``REQUIRED``) must be given;
its ``sweep`` is what the grid crosses when the command line names no value.

Example:
    >>> width = Knob("width", int, default=512, minimum=1, help="hidden width")
    >>> width.parse("256")
    256
    >>> try:
    ...     width.parse("0")
    ... except KnobError as err:
    ...     print(err)
    width must be >= 1, got 0
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


class _Required:
    """The default of a knob that must be given: one instance, which pickles as a reference to it."""

    def __repr__(self) -> str:
        return "REQUIRED"

    def __reduce__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


class KnobError(ValueError):
    """A knob value of the wrong type or out of range (one-line message)."""


@dataclass(frozen=True)
class Knob:
    """One declared setting.

    Attributes:
        name: the knob's name on the command line and in result tables.
        type: ``int``, ``float`` or ``str``.
        default: the value used when none is given; ``REQUIRED`` when a value must be given.
        minimum, maximum: inclusive bounds for numbers (``None``: unbounded).
        exclusive_minimum: the minimum itself is not allowed (``> minimum``).
        choices: the allowed values of a string knob (empty: any).
        sweep: what the grid crosses when no value is named (default: the default alone).
        help: one line for ``bench list``.
    """

    name: str
    type: type
    default: Any = REQUIRED
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: tuple[str, ...] = ()
    sweep: tuple = field(default=())
    help: str = ""

    def __post_init__(self) -> None:
        if self.type not in (int, float, str):
            raise TypeError(f"knob {self.name}: type must be int, float or str")
        if not self.name.isidentifier():
            raise ValueError(f"knob name '{self.name}' is not an identifier")
        if self.default is not REQUIRED:
            object.__setattr__(self, "default", self.check(self.default))
        object.__setattr__(self, "sweep", tuple(self.check(v) for v in self.sweep))

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def default_values(self) -> tuple:
        """The values the grid crosses when none is named."""
        if self.sweep:
            return self.sweep
        return () if self.required else (self.default,)

    def parse(self, text: str) -> Any:
        """A command-line string as a checked value of this knob's type."""
        try:
            value = self.type(float(text)) if self.type is int and _integral(text) else self.type(text)
        except ValueError:
            raise KnobError(f"{self.name} takes {self.type.__name__} values, got '{text}'") from None
        return self.check(value)

    def check(self, value: Any) -> Any:
        """``value`` cast to this knob's type, or :class:`KnobError` naming the problem."""
        if self.type is str:
            if not isinstance(value, str):
                raise KnobError(f"{self.name} takes a string, got {value!r}")
            if self.choices and value not in self.choices:
                raise KnobError(f"{self.name} must be one of {', '.join(self.choices)}, got '{value}'")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise KnobError(f"{self.name} takes {self.type.__name__} values, got {value!r}")
        if self.type is int and float(value) != int(value):
            raise KnobError(f"{self.name} takes integers, got {value:g}")
        value = self.type(value)
        if self.type is float and not math.isfinite(value):
            raise KnobError(f"{self.name} must be finite, got {value}")
        if self.minimum is not None:
            if self.exclusive_minimum and value <= self.minimum:
                raise KnobError(f"{self.name} must be > {self.minimum:g}, got {value:g}")
            if value < self.minimum:
                raise KnobError(f"{self.name} must be >= {self.minimum:g}, got {value:g}")
        if self.maximum is not None and value > self.maximum:
            raise KnobError(f"{self.name} must be <= {self.maximum:g}, got {value:g}")
        return value

    def describe(self) -> str:
        """``name (type, default)``: the default, or for a required knob what the grid crosses."""
        show = lambda v: f"{v:g}" if isinstance(v, float) else str(v)  # noqa: E731
        if self.required:
            default = "required" + (f", grid default {','.join(map(show, self.sweep))}" if self.sweep else "")
        else:
            default = f"default {show(self.default)}"
        return f"{self.name} ({self.type.__name__}, {default})"


def _integral(text: str) -> bool:
    try:
        return float(text).is_integer()
    except ValueError:
        return False
