"""The paper's headline numbers as registered claims, checked against stored results by ``bench verify``.

A claim is either a *value* (a cell's metric equals the paper's number within a tolerance, meant for
the ``paper`` profile) or an *ordering* (one configuration beats another on a metric, which is what
a scaled-down ``cpu`` run can test). Means are over seeds of converged runs (diverged runs left out).

Verdicts (:data:`VERDICTS`), decided in this order:

- **not testable**: a side has no stored cell or no finite value, or a side names a nominal CR ``c``
  that its defense does not reach on this victim: the mean ``realized_cr`` of its cells (else of
  its victim's cells) differs from ``c`` by more than 1% (e.g. learned 1×1 capped at a realised
  CR of 8 cannot test a claim at CR 16 or 32).
- **no leakage measured**: a privacy-gain claim (:func:`privacy_gain_side`: an ordering on a
  privacy metric between two configurations under the same image attack) whose more private side,
  as the claim states it, is within noise of the floor: the ``prior`` attack's cells on the same
  dataset, victim and cut, any defense, per-seed means; the noise rule is
  :func:`bench.report.floor.leakage_gap` (gap ``d·(prior − attack) ≤ 2·SE`` of the two seed
  means: within noise of the floor, or worse than it). The attack measured nothing on that
  configuration beyond a guess that never reads the payload, so the ordering says nothing about
  the defense. Without prior cells this check is skipped.
- **held** / **not held**: the comparison itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from bench.report.aggregate import at_default_settings, diverged_cells, not_learned_cells, t_halfwidth, victim_view
from bench.report.floor import FLOOR_KEYS, floor_metric, leakage_gap, prior_seed_values
from bench.report.labels import privacy_direction
from bench.report.table_specs import UNSPLIT_HEADLINE
from bench.report.worst_case import is_image_attack

HELD, NOT_HELD, NO_LEAKAGE, NOT_TESTABLE = "held", "not held", "no leakage measured", "not testable"
VERDICTS = (HELD, NOT_HELD, NO_LEAKAGE, NOT_TESTABLE)  # the order ``bench verify`` counts them in
CR_TOLERANCE = 0.01  # a realised CR within 1% of the nominal one tests the claim


@dataclass(frozen=True)
class Selector:
    """A configuration: every given factor must match (``None`` matches anything)."""

    defense: str
    attack: str = "none"
    cr: float | None = None
    lambda_wcc: float = 0.0
    sigma: float | None = None
    dataset: str | None = None
    cut: str | None = None

    def mask(self, table: pd.DataFrame) -> pd.Series:
        m = (table["defense"] == self.defense) & (table["attack"] == self.attack)
        m &= table["lambda_wcc"].fillna(0.0) == self.lambda_wcc
        for name in ("cr", "sigma"):
            value = getattr(self, name)
            m &= table[name].isna() if value is None else (table[name] == value)
        for name in ("dataset", "cut"):
            if getattr(self, name) is not None:
                m &= table[name] == getattr(self, name)
        return m

    def label(self) -> str:
        parts = [self.defense] + ([self.cut] if self.cut else []) + ([f"CR {self.cr:g}"] if self.cr else []) + (
            [f"λ {self.lambda_wcc:g}"] if self.lambda_wcc else []) + ([f"σ {self.sigma:g}"] if self.sigma else [])
        return " ".join(parts) + (f" / {self.attack}" if self.attack != "none" else "")


@dataclass(frozen=True)
class Claim:
    """One registered claim.

    Attributes:
        id: short identifier.
        table: where the paper states it (``"Table III"``, ``"Sect. I"``).
        text: the claim in words.
        metric: the metric compared.
        left: the configuration the claim is about.
        relation: ``"<"`` or ``">"`` (ordering: left relation right), or ``"≈"`` (value).
        right: the configuration compared against (orderings).
        factor, offset: orderings compare ``left`` with ``factor × right + offset`` (0.94 for "keeps 94% of
            raw"; +0.032 for "gains at most 0.032").
        value, tolerance: the paper's number and the allowed absolute deviation (values).
        profiles: the profiles the claim is checked on.
    """

    id: str
    table: str
    text: str
    metric: str
    left: Selector
    relation: str
    right: Selector | None = None
    factor: float = 1.0
    offset: float = 0.0
    value: float | None = None
    tolerance: float = 0.0
    profiles: tuple[str, ...] = field(default=("cpu", "paper"))


def _ordering(cid, table, text, metric, left, relation, right, factor=1.0, offset=0.0, profiles=("cpu", "paper")) -> Claim:
    return Claim(cid, table, text, metric, left, relation, right, factor=factor, offset=offset, profiles=profiles)


def _ls_beats(base: str, attack: str, cr: float, table: str) -> Claim:
    return _ordering(
        f"{attack}-ssim-lsf-below-{base}-cr{cr:g}", table,
        f"{attack}: LightSplit-F lowers SSIM more than {base} at CR {cr:g}", "ssim",
        Selector("lightsplit-f", attack, cr), "<", Selector(base, attack, cr),
    )


def _composition(attack: str, metric: str, relation: str, table: str) -> list[Claim]:
    """LightSplit-F+DP is more private than LightSplit-F alone and than DP alone (σ = 0.02, CR 8)."""
    both = Selector("lightsplit-f+dp", attack, 8.0, sigma=0.02)
    return [
        _ordering(f"{attack}-lsf-dp-beats-{name}", table,
                  f"{attack}: LightSplit-F+DP is more private than {label} ({metric})", metric, both, relation, alone)
        for name, label, alone in (("lsf", "LightSplit-F alone", Selector("lightsplit-f", attack, 8.0)),
                                   ("dp", "DP alone", Selector("raw+dp", attack, sigma=0.02)))
    ]


def _unsplit_above(defense: str, cr: float, lambda_wcc: float = 0.0) -> Claim:
    wcc = f" at λ_WCC {lambda_wcc:g}" if lambda_wcc else ""
    return _ordering(f"unsplit-masked-mse-{defense}-above-raw-cr{cr:g}" + (f"-wcc{lambda_wcc:g}" if lambda_wcc else ""),
                     "Table III" if cr == 8 else "Table II",
                     f"UnSplit: {defense} raises the foreground-masked MSE over raw at CR {cr:g}{wcc} (+27% on MNIST)",
                     UNSPLIT_HEADLINE, Selector(defense, "unsplit", cr, lambda_wcc=lambda_wcc), ">", Selector("raw", "unsplit"))


PROJECTION_AWARE = ("decoder-z-lift", "decoder-fused")


def _lm(cut: str, cr: float, dataset: str) -> Selector:
    return Selector("lightsplit-f", cr=cr, dataset=dataset, cut=cut)


# App. B-B5 / Fig. 9 (the paper does not name the LightSplit variant; checked on LightSplit-F):
# "perplexity inflation at CR 8/32x falls from 1.15x/1.36x on the 124M model to 1.06x/1.11x at 1.5B".
# The cpu profile tests the two orderings on its two sizes; the paper profile tests the values.
LM_CLAIMS: list[Claim] = [
    *[_ordering(f"lm-inflation-lsf-rises-with-cr-{cut}", "Fig. 9",
                f"GPT-2 {cut}: LightSplit-F's perplexity inflation is larger at CR 32 than at CR 8",
                "perplexity_inflation", _lm(cut, 32.0, "wikitext-2"), ">", _lm(cut, 8.0, "wikitext-2"),
                profiles=("cpu", "cpu-x4"))
      for cut in ("cpu-s", "cpu-m")],
    *[_ordering(f"lm-inflation-lsf-smaller-on-larger-cr{cr:g}", "Fig. 9",
                f"GPT-2: LightSplit-F's perplexity inflation at CR {cr:g} is smaller on the larger model (cpu-m < cpu-s)",
                "perplexity_inflation", _lm("cpu-m", cr, "wikitext-2"), "<", _lm("cpu-s", cr, "wikitext-2"),
                profiles=("cpu", "cpu-x4")) for cr in (8.0, 32.0)],
    *[Claim(f"lm-inflation-lsf-{cut}-cr{cr:g}", "Fig. 9",
            f"GPT-2 {cut} on WikiText-103: LightSplit-F's perplexity inflation at CR {cr:g} is {value}x",
            "perplexity_inflation", _lm(cut, cr, "wikitext-103"), "≈", value=value, tolerance=0.05, profiles=("paper",))
      for cut, cr, value in (("124m", 8.0, 1.15), ("124m", 32.0, 1.36), ("1.5b", 8.0, 1.06), ("1.5b", 32.0, 1.11))],
    *[_ordering(f"lm-inflation-lsf-smaller-at-1.5b-cr{cr:g}", "Fig. 9",
                f"GPT-2 on WikiText-103: LightSplit-F's perplexity inflation at CR {cr:g} is smaller at 1.5B than at 124M",
                "perplexity_inflation", _lm("1.5b", cr, "wikitext-103"), "<", _lm("124m", cr, "wikitext-103"),
                profiles=("paper",)) for cr in (8.0, 32.0)],
]

CLAIMS: list[Claim] = [
    # Table II / XIII: LightSplit-F against the matched-budget baselines, at every CR.
    *[_ls_beats(base, "decoder-ref", cr, "Table XIII") for base in ("topk", "learned-1x1") for cr in (8.0, 16.0, 32.0)],
    *[_ls_beats("topk", attack, cr, "Table II") for attack in ("sdar", "fora") for cr in (8.0, 16.0, 32.0)],
    *[_ls_beats("learned-1x1", attack, 8.0, "Table III") for attack in ("sdar", "fora")],
    _ordering("sdar-ssim-lsf-falls-with-cr", "Table II", "SDAR: LightSplit-F's SSIM falls further as CR grows (8 → 32)",
              "ssim", Selector("lightsplit-f", "sdar", 32.0), "<", Selector("lightsplit-f", "sdar", 8.0)),
    _ordering("sdar-ssim-topk32-above-lsf8", "Table II", "SDAR: top-K at 32× still removes less SSIM than LightSplit-F at 8×",
              "ssim", Selector("topk", "sdar", 32.0), ">", Selector("lightsplit-f", "sdar", 8.0)),
    *[_unsplit_above("lightsplit-f", cr) for cr in (8.0, 16.0, 32.0)],
    _unsplit_above("topk", 8.0),
    _ordering("unsplit-masked-mse-lsf-above-topk", "Table III", "UnSplit: top-K lands between raw and LightSplit-F",
              UNSPLIT_HEADLINE, Selector("lightsplit-f", "unsplit", 8.0), ">", Selector("topk", "unsplit", 8.0)),
    # The learned lift-back post-processes the same payload: SDAR stays far below raw under it.
    *[_ordering(f"sdar-lsl-below-raw-cr{cr:g}", "Sect. V-B4", f"SDAR: LightSplit-L stays below raw at CR {cr:g}", "ssim",
                Selector("lightsplit-l", "sdar", cr), "<", Selector("raw", "sdar")) for cr in (8.0, 16.0, 32.0)],
    # Table III: WCC. The paper's WCC gains are on LPIPS; its pixel metrics are level with λ = 0.
    *[_ordering(f"sdar-wcc{lam:g}-raises-lpips", "Table III", f"SDAR: WCC (λ={lam:g}) raises LightSplit-F's LPIPS at CR 8",
                "lpips", Selector("lightsplit-f", "sdar", 8.0, lambda_wcc=lam), ">", Selector("lightsplit-f", "sdar", 8.0))
      for lam in (1e-3, 1e-1)],
    *[_unsplit_above("lightsplit-f", 8.0, lam) for lam in (1e-3, 1e-1)],
    # Table III / V / XV: DP at σ = 0.02 and its composition with the projection.
    _ordering("utility-dp-keeps-96pct", "Sect. V-B5", "DP at σ = 0.02 keeps ≥ 96% of raw accuracy (paper: ≈ 97%)",
              "accuracy", Selector("raw+dp", sigma=0.02), ">", Selector("raw"), factor=0.96),
    *_composition("sdar", "ssim", "<", "Table III"),
    *_composition("fora", "ssim", "<", "Table III"),
    *_composition("unsplit", UNSPLIT_HEADLINE, ">", "Table III"),
    *_composition("fsha", "ssim", "<", "Table XV"),
    # Table XV: FSHA (active).
    _ordering("fsha-lsf-below-raw", "Table XV", "FSHA: LightSplit-F degrades the active attacker (SSIM below raw)",
              "ssim", Selector("lightsplit-f", "fsha", 8.0), "<", Selector("raw", "fsha")),
    *[_ordering(f"fsha-lsf-below-{base}", "Table XV", f"FSHA: LightSplit-F degrades the attacker more than {base}",
                "ssim", Selector("lightsplit-f", "fsha", 8.0), "<", Selector(base, "fsha", 8.0)) for base in ("topk", "learned-1x1")],
    # Table XVI: attackers built around the public R gain at most +0.032 SSIM over a decoder on z alone.
    *[_ordering(f"{attack}-gains-at-most-0.032-ssim", "Table XVI",
                f"{attack} gains at most +0.032 SSIM over decoder-z (LightSplit-F, CR 8)", "ssim",
                Selector("lightsplit-f", attack, 8.0), "<", Selector("lightsplit-f", "decoder-z", 8.0), offset=0.032)
      for attack in PROJECTION_AWARE],
    *[_ordering(f"utility-lsf-keeps-94pct-cr{cr:g}", "Sect. I", f"LightSplit-F keeps ≥ 94% of raw accuracy at CR {cr:g}",
                "accuracy", Selector("lightsplit-f", cr=cr), ">", Selector("raw"), factor=0.94) for cr in (8.0, 16.0, 32.0)],
    # Table II (CIFAR-10): SDAR's SSIM falls 37% / 44% / 58% and FORA's LPIPS rises ~+210% under LightSplit-F.
    *[_ordering(f"sdar-ssim-lsf-below-raw-cr{cr:g}", "Table II", f"SDAR: LightSplit-F lowers SSIM below raw at CR {cr:g}",
                "ssim", Selector("lightsplit-f", "sdar", cr), "<", Selector("raw", "sdar")) for cr in (8.0, 16.0, 32.0)],
    *[_ordering(f"fora-lpips-lsf-above-raw-cr{cr:g}", "Table II", f"FORA: LightSplit-F raises LPIPS over raw at CR {cr:g}",
                "lpips", Selector("lightsplit-f", "fora", cr), ">", Selector("raw", "fora")) for cr in (8.0, 16.0, 32.0)],
    # Table III (HAR): with λ_WCC = 0.1 at 8×, R² falls 26.4% and subject re-identification 55.0%.
    *[_ordering(f"{attack}-lsf-wcc0.1-below-raw", "Table III", f"{attack}: LightSplit-F with λ_WCC 0.1 lowers {metric} below raw at CR 8",
                metric, Selector("lightsplit-f", attack, 8.0, lambda_wcc=0.1), "<", Selector("raw", attack))
      for attack, metric in (("har-recon", "median_r2"), ("har-reid", "reid_accuracy"))],
    Claim("sdar-raw-l4-ssim", "Table X", "SDAR reconstructs the undefended CIFAR-10 L=4 cut at SSIM 0.83", "ssim",
          Selector("raw", "sdar", dataset="cifar10"), "≈", value=0.83, tolerance=0.05, profiles=("paper",)),
    *LM_CLAIMS,
]


def _values(table: pd.DataFrame, selector: Selector, metric: str) -> pd.DataFrame:
    """The finite values of ``metric`` for ``selector``, leaving out diverged runs and those whose victim
    did not learn (rows of the table)."""
    rows = at_default_settings(table[selector.mask(table) & (table["status"] == "ok")])
    left_out = diverged_cells(rows) | not_learned_cells(rows)
    values = rows[(rows["metric"] == metric) & ~rows["cell_id"].isin(left_out)]
    return values[values["value"].notna()]


def _mean(table: pd.DataFrame, selector: Selector, metric: str) -> tuple[float | None, int]:
    """Mean over seeds of ``metric`` for ``selector``, leaving out diverged runs."""
    values = _values(table, selector, metric)["value"]
    return (float(values.mean()) if len(values) else None), len(values)


def _described(table: pd.DataFrame, selector: Selector, metric: str) -> str:
    """``mean ±h (n=…)``: the seed mean with the half-width of its 95% t-interval (none for n = 1)."""
    values = _values(table, selector, metric)["value"].to_numpy()
    n = len(values)
    if n < 2:
        return f"{values.mean():.4f} (n={n}, no CI)"
    return f"{values.mean():.4f} ±{t_halfwidth(values):.4f} (n={n})"


def unreached_cr(table: pd.DataFrame, selector: Selector) -> str | None:
    """Why ``selector`` cannot be tested when its defense does not reach its nominal CR (else None):
    the mean ``realized_cr`` of its cells, else of its victim's cells (attack ``none``), differs from
    the nominal CR by more than :data:`CR_TOLERANCE`. No stored ``realized_cr``: None."""
    if selector.cr is None:
        return None
    for attack in dict.fromkeys((selector.attack, "none")):
        realised, _ = _mean(table, replace(selector, attack=attack), "realized_cr")
        if realised is not None:
            if abs(realised - selector.cr) > CR_TOLERANCE * selector.cr:
                return (f"{selector.label()}: {selector.defense} reaches a realised CR of {realised:g} on this victim, "
                        f"not the nominal {selector.cr:g} the claim is made at")
            return None
    return None


def privacy_gain_side(claim: Claim) -> Selector | None:
    """The side a privacy-gain claim says is more private (None for any other claim): an ordering on a
    metric with a privacy direction whose two sides name the same image attack; the left side when
    the relation points toward privacy (``<`` on SSIM, ``>`` on MSE), else the right."""
    if claim.relation == "≈" or claim.right is None or not privacy_direction(claim.metric):
        return None
    if claim.left.attack != claim.right.attack or not is_image_attack(claim.left.attack):
        return None
    toward_privacy = (claim.relation == ">") == (privacy_direction(claim.metric) > 0)
    return claim.left if toward_privacy else claim.right


def at_floor(table: pd.DataFrame, selector: Selector, metric: str) -> str | None:
    """The detail when ``selector``'s attack measured no leakage on ``metric`` (within noise of the
    floor, or worse than it); None when it beat the floor or no prior cell matches its cells'
    dataset, victim and cut."""
    attack = _values(table, selector, metric)
    prior = prior_seed_values(table)
    if attack.empty or prior.empty:
        return None
    places = set(attack[list(FLOOR_KEYS)].itertuples(index=False, name=None))
    prior = prior[(prior["metric"] == floor_metric(metric))
                  & pd.Series(list(zip(*(prior[k] for k in FLOOR_KEYS))), index=prior.index).isin(places)]
    seeds = prior.groupby("seed")["value"].mean().dropna()
    if seeds.empty:
        return None
    gap, noise = leakage_gap(attack["value"].to_numpy(), seeds.to_numpy(), metric)
    if gap > noise:
        return None
    return (f"{metric}: {selector.label()} {attack['value'].mean():.4f} (n={len(attack)}) vs the floor (prior "
            f"{floor_metric(metric)}) {seeds.mean():.4f} (n={len(seeds)}): gap past the floor {gap:+.4f} ≤ 2·SE {noise:.4f}")


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    status: str
    detail: str
    dataset: str = ""


def verify(table: pd.DataFrame, profile: str, claims: list[Claim] = CLAIMS) -> list[Verdict]:
    """Check every claim registered for ``profile`` against the stored results of that profile, on
    each stored dataset, victim and cut separately (a claim comparing cuts: each victim; verdicts as
    the module says). A claim pinned to a dataset is checked on that dataset only, and is not
    testable when none of its cells is stored."""
    table = table[table["profile"] == profile]
    # Utility claims read the victims (attack ``none``), whose metrics every attack cell also stores.
    table = pd.concat([table[table["attack"] != "none"], victim_view(table)], ignore_index=True)
    claims = [c for c in claims if profile in c.profiles]
    stored = sorted(table["dataset"].dropna().unique()) if not table.empty else []
    verdicts = []
    for dataset in stored:
        mine = [c for c in claims if c.left.dataset in (None, dataset)]
        for where, cells, theirs in _settings(table[table["dataset"] == dataset], mine):
            verdicts += [replace(v, dataset=where) for v in _verify_one(cells, theirs)]
    for claim in claims:
        if stored and claim.left.dataset is not None and claim.left.dataset not in stored:
            verdicts.append(Verdict(claim, NOT_TESTABLE, f"no stored {claim.left.dataset} cells", claim.left.dataset))
    return verdicts


def _names_cut(claim: Claim) -> bool:
    return any(s is not None and s.cut is not None for s in (claim.left, claim.right))


def _settings(table: pd.DataFrame, claims: list[Claim]) -> list[tuple[str, pd.DataFrame, list[Claim]]]:
    """One dataset's cells split so that no claim pools victims or cuts: a claim that names no cut is
    checked on each (victim, cut) apart, one that names its cuts on each victim apart. Each part is
    labelled by the dataset, plus the victim (and cut) where the dataset has several."""
    dataset = table["dataset"].iloc[0]
    pairs = sorted(table[["victim", "cut"]].drop_duplicates().itertuples(index=False, name=None))
    victims = sorted({victim for victim, _ in pairs})
    cut_free = [c for c in claims if not _names_cut(c)]
    cut_named = [c for c in claims if _names_cut(c)]
    out = [(dataset if len(pairs) == 1 else f"{dataset} {victim}/{cut}",
            table[(table["victim"] == victim) & (table["cut"] == cut)], cut_free) for victim, cut in pairs]
    out += [(dataset if len(victims) == 1 else f"{dataset} {victim}", table[table["victim"] == victim], cut_named)
            for victim in victims]
    return [part for part in out if part[2]]


def _verify_one(table: pd.DataFrame, claims: list[Claim]) -> list[Verdict]:
    """The verdicts of ``claims`` on one part of a dataset's cells (one victim and cut, or one victim)."""
    verdicts = []
    for claim in claims:
        left, _ = _mean(table, claim.left, claim.metric)
        unreached = next(filter(None, (unreached_cr(table, s) for s in (claim.left, claim.right) if s is not None)), None)
        if unreached is not None:
            verdicts.append(Verdict(claim, NOT_TESTABLE, unreached))
            continue
        if claim.relation == "≈":
            if left is None:
                verdicts.append(Verdict(claim, NOT_TESTABLE, f"no stored {claim.left.label()} cells"))
                continue
            ok = abs(left - claim.value) <= claim.tolerance
            verdicts.append(Verdict(claim, HELD if ok else NOT_HELD, f"{claim.metric} "
                                    f"{_described(table, claim.left, claim.metric)} vs paper {claim.value} ± {claim.tolerance}"))
            continue
        right, _ = _mean(table, claim.right, claim.metric)
        if left is None or right is None:
            missing = claim.left if left is None else claim.right
            stored = bool(missing.mask(table).any())
            reason = f"no finite {claim.metric} in the stored {missing.label()} cells" if stored else f"no stored {missing.label()} cells"
            verdicts.append(Verdict(claim, NOT_TESTABLE, reason))
            continue
        target = claim.factor * right + claim.offset
        ok = left < target if claim.relation == "<" else left > target
        scale = (f"{claim.factor:g}×" if claim.factor != 1 else "") + (f"(+{claim.offset:g}) " if claim.offset else "")
        right_text = _described(table, claim.right, claim.metric)
        if claim.factor != 1 or claim.offset:
            right_text = f"{target:.4f} = {scale}{right_text}"
        detail = (f"{claim.metric}: {claim.left.label()} {_described(table, claim.left, claim.metric)} {claim.relation} "
                  f"{claim.right.label()} {right_text}")
        side = privacy_gain_side(claim)
        floor = at_floor(table, side, claim.metric) if side is not None else None
        if floor is not None:
            verdicts.append(Verdict(claim, NO_LEAKAGE, f"{floor}; the claim's comparison: {detail}"))
            continue
        verdicts.append(Verdict(claim, HELD if ok else NOT_HELD, detail))
    return verdicts
