"""The paper's own numbers beside the measured ones, where it reports the entry's configuration.

The numbers are the value claims of :data:`bench.report.paper_claims.CLAIMS` (relation ``≈``: a
configuration and the value the paper gives for it, with its table and the tolerance ``bench verify``
allows); nothing is restated here. A claim's configuration matches an entry whose defense, knobs
(CR, σ, λ_WCC), dataset and cut are the claim's, on any profile: the entry says when its profile is
not one the claim is checked on (a reduced budget measures the same configuration at a smaller scale).
"""
from __future__ import annotations

import math
from collections.abc import Mapping


def _same(value: object, wanted: float | None) -> bool:
    if wanted is None:
        return value is None
    return isinstance(value, (int, float)) and math.isclose(float(value), wanted)


def matches(selector, entry: Mapping) -> bool:
    """Whether a claim's :class:`~bench.report.paper_claims.Selector` names ``entry``'s configuration
    (its attack aside)."""
    knobs = entry["defense"]["knobs"]
    return (selector.defense == entry["defense"]["name"]
            and math.isclose(float(knobs.get("lambda_wcc") or 0.0), selector.lambda_wcc)
            and _same(knobs.get("cr"), selector.cr) and _same(knobs.get("sigma"), selector.sigma)
            and selector.dataset in (None, entry["dataset"]) and selector.cut in (None, entry["cut"]))


def _measured(claim, entry: Mapping) -> dict | None:
    """The entry's stat of the claim's metric: the victim's own (attack ``none``), else the attack's
    at its default budget (1)."""
    metric, attack = claim.metric, claim.left.attack
    if attack == "none":
        if metric == "accuracy":
            return entry["accuracy"]
        return (entry.get("perplexity") or {}).get("inflation") if metric == "perplexity_inflation" else None
    for item in entry["attacks"]:
        if item["attack"] == attack and float(item["settings"].get("budget", 1.0)) == 1.0 and metric in item["metrics"]:
            return item["metrics"][metric]
    return None


def paper_values(entry: Mapping, claims: list | None = None) -> list[dict]:
    """Every value the paper reports for ``entry``'s configuration, with the entry's measurement of it.

    Args:
        entry: a leaderboard entry (:mod:`bench.site.entries`).
        claims: the claims to read (default: :data:`bench.report.paper_claims.CLAIMS`).

    Returns:
        ``{"claim", "where", "text", "attack", "metric", "value", "tolerance", "profiles", "measured"}``
        per matching value claim that the entry measures (``measured``: its stat).
    """
    if claims is None:
        from bench.report.paper_claims import CLAIMS as claims
    out = []
    for claim in claims:
        if claim.relation != "≈" or claim.value is None or not matches(claim.left, entry):
            continue
        measured = _measured(claim, entry)
        if measured is None or measured["mean"] is None:
            continue
        out.append({"claim": claim.id, "where": claim.table, "text": claim.text, "attack": claim.left.attack,
                    "metric": claim.metric, "value": claim.value, "tolerance": claim.tolerance,
                    "profiles": list(claim.profiles), "measured": measured})
    return out
