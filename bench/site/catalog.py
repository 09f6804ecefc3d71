"""What the registries say about each defense and attack: its docstring, paper, threat model, knobs.

Reads the registered classes (importing the registries imports torch), so a defense or attack that a
results folder names but this installation does not register (a plugin not loaded) is described as such.
"""
from __future__ import annotations

import dataclasses
import inspect
import re
from dataclasses import dataclass, field
from functools import cache

from bench.report.labels import attack_label, defense_label
from bench.site.markup import ARXIV_ABS, paper_links, venues

NAMED_ARXIV = re.compile(r"([A-Z][\w-]+) \(arXiv:(\d{4}\.\d{4,5})\)")

FIELD_KEYS = ("Paper:", "Threat model:")
DROPPED_SECTIONS = ("Args:", "Attributes:", "Raises:", "Returns:", "Example:", "Examples:")


@dataclass(frozen=True)
class KnobInfo:
    name: str
    type: str
    default: str
    help: str


@dataclass(frozen=True)
class Described:
    """A docstring split into its description and its ``Paper:`` and ``Threat model:`` fields.

    Attributes:
        links: ``(arXiv:ID, abstract URL)`` of each paper the ``Paper:`` line names (by identifier, or
            by a name another registered class's ``Paper:`` line gives one: ``LightSplit``).
        venues: the venues with years it names (``CVPR 2024``).
    """

    description: list[str] = field(default_factory=list)
    paper: str = ""
    threat_model: str = ""
    links: list[tuple[str, str]] = field(default_factory=list)
    venues: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DefenseInfo:
    name: str
    label: str
    registered: bool
    parts: list[tuple[str, Described]] = field(default_factory=list)
    knobs: list[KnobInfo] = field(default_factory=list)


@dataclass(frozen=True)
class AttackInfo:
    name: str
    label: str
    registered: bool
    described: Described = field(default_factory=Described)
    threat_model: str = ""
    requires: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    scorings: list[str] = field(default_factory=list)
    knobs: list[KnobInfo] = field(default_factory=list)
    headline_metric: str = ""
    configs: dict[str, dict] = field(default_factory=dict)
    defaults: dict[str, object] = field(default_factory=dict)


@cache
def known_papers() -> dict[str, str]:
    """``{"LightSplit": "2605.13265"}``: the papers every registered attack's and defense's ``Paper:``
    line names with an arXiv identifier (imports the registries: torch)."""
    from attacks import ATTACKS
    from defenses import DEFENSES, PAYLOAD_TRANSFORMS

    found: dict[str, str] = {}
    for registry in (ATTACKS, DEFENSES, PAYLOAD_TRANSFORMS):
        for name in registry.names():
            paper = describe_docstring(inspect.getdoc(registry.get(name))).paper
            for title, arxiv in NAMED_ARXIV.findall(paper):
                found.setdefault(title, arxiv)
    return found


def describe_docstring(doc: str | None, known: dict[str, str] | None = None) -> Described:
    """Paragraphs of ``doc`` with its ``Paper:`` and ``Threat model:`` fields taken out and its
    ``Args:``-style sections (the constructor's) dropped; ``known`` (:func:`known_papers`) links a
    paper the ``Paper:`` line names without its identifier."""
    paragraphs: list[list[str]] = [[]]
    fields: dict[str, list[str]] = {}
    state = "text"  # or a field key, or "drop" inside an Args:-style section
    for line in inspect.cleandoc(doc or "").splitlines():
        stripped = line.strip()
        key = next((k for k in FIELD_KEYS if stripped.startswith(k)), None)
        if not stripped:
            state = "drop" if state == "drop" else "text"
            paragraphs.append([])
        elif key:
            state = key
            fields.setdefault(key, []).append(stripped[len(key):].strip())
        elif stripped in DROPPED_SECTIONS:
            state = "drop"
        elif state == "drop" and line.startswith(" "):
            continue
        elif state in FIELD_KEYS:
            fields[state].append(stripped)
        else:
            if re.match(r"([*-]|\d+\.) ", stripped) and paragraphs[-1]:  # a list item is its own paragraph
                paragraphs.append([])
            state = "text"
            paragraphs[-1].append(stripped)
    text = [" ".join(p) for p in paragraphs if p]
    paper = " ".join(fields.get("Paper:", []))
    links = paper_links(paper)
    for title, arxiv in (known or {}).items():
        if re.search(rf"\b{re.escape(title)}\b", paper) and all(url != ARXIV_ABS + arxiv for _, url in links):
            links.append((f"arXiv:{arxiv}", ARXIV_ABS + arxiv))
    return Described(text, paper, " ".join(fields.get("Threat model:", [])), links, venues(paper))


def _knobs(knobs) -> list[KnobInfo]:
    out = []
    for k in knobs:
        if k.required:
            default = "required" + (f" (grid crosses {', '.join(f'{v:g}' if isinstance(v, float) else str(v) for v in k.sweep)})"
                                    if k.sweep else "")
        else:
            default = f"{k.default:g}" if isinstance(k.default, float) else str(k.default)
        out.append(KnobInfo(k.name, k.type.__name__, default, k.help))
    return out


def defense_info(name: str) -> DefenseInfo:
    """The registered parts of ``name`` (``lightsplit-f+dp``: the base, then each transform) and its knobs."""
    from bench.registry import RegistryError
    from defenses import DEFENSES, PAYLOAD_TRANSFORMS, knobs_of, split_name

    try:
        base, transforms = split_name(name)
        parts = [(base, DEFENSES.get(base))] + [(t, PAYLOAD_TRANSFORMS.get(t)) for t in transforms]
        knobs = _knobs(knobs_of(name))
    except (RegistryError, ValueError):
        return DefenseInfo(name, defense_label(name), registered=False)
    known = known_papers()
    return DefenseInfo(name, defense_label(name), registered=True,
                       parts=[(part, describe_docstring(inspect.getdoc(cls), known)) for part, cls in parts], knobs=knobs)


def knob_defaults(knobs) -> dict[str, object]:
    """``{name: default}`` of the knobs that have one."""
    return {k.name: k.default for k in knobs if not k.required}


@cache
def attack_knob_defaults(name: str) -> dict[str, object]:
    """The registered attack ``name``'s knob defaults (empty for an attack this installation lacks)."""
    from attacks import ATTACKS

    return knob_defaults(ATTACKS.get(name).knobs) if name in ATTACKS else {}


def attack_info(name: str, *, profiles: list[str], recorded_headline: str = "") -> AttackInfo:
    """The registered attack ``name``: docstring fields, threat model, requirements, knobs, headline
    metric and its configuration under each of ``profiles`` (its class's ``configs``). An attack this
    installation does not register keeps the headline metric its rows recorded (``recorded_headline``)."""
    from attacks import ATTACKS

    label = attack_label(name)
    if name not in ATTACKS:
        return AttackInfo(name, label, registered=False, headline_metric=recorded_headline)
    cls = ATTACKS.get(name)
    return AttackInfo(
        name, label, registered=True, described=describe_docstring(inspect.getdoc(cls), known_papers()),
        threat_model=cls.threat_model.value, requires=sorted(c.value for c in cls.requires), kinds=list(cls.kinds),
        scorings=[s.name.lower() for s in cls.scorings], knobs=_knobs(cls.knobs), headline_metric=cls.headline_metric,
        configs={p: dataclasses.asdict(cls.configs[p]) for p in profiles if p in cls.configs},
        defaults=knob_defaults(cls.knobs),
    )
