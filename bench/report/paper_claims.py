"""The paper's claims as data: which configuration it says beats which, on what metric, or what value.

Each :class:`Claim` names its configurations by :class:`Selector` and the paper's table or section;
:mod:`bench.report.claims` checks them against stored results (``bench verify``). The catalogue is
:data:`CLAIMS`; the GPT-2 claims of Fig. 9 are also :data:`LM_CLAIMS`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from bench.report.table_specs import UNSPLIT_HEADLINE


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
    knobs: tuple[tuple[str, float], ...] = ()  # a field defense's own knobs, e.g. (("nopeek_alpha", 0.001),)

    def mask(self, table: pd.DataFrame) -> pd.Series:
        m = (table["defense"] == self.defense) & (table["attack"] == self.attack)
        for name, value in self.knobs:
            m &= (table[name] == value) if name in table.columns else False
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
            [f"λ {self.lambda_wcc:g}"] if self.lambda_wcc else []) + ([f"σ {self.sigma:g}"] if self.sigma else []) + [
            f"{name} {value:g}" for name, value in self.knobs]
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

def _nopeek(attack: str, alpha: float) -> Selector:
    return Selector("nopeek", attack, 8.0, knobs=(("nopeek_alpha", alpha),))


def _shredder(attack: str) -> Selector:
    return Selector("shredder", attack, 8.0, knobs=(("shredder_lambda", 0.5),))


def _disco(attack: str, alpha: float) -> Selector:
    return Selector("disco", attack, 8.0, knobs=(("disco_alpha", alpha),))


def _adversarial(attack: str) -> Selector:
    return Selector("adversarial", attack, 8.0, knobs=(("adv_lambda", 0.3),))


def _mid(attack: str) -> Selector:
    return Selector("mid", attack, 8.0, knobs=(("mid_lambda", 0.5),))


# The field's defenses (issue 41), where a paper's claim can be tested here. NoPeek (arXiv:2008.09161),
# abstract: minimising distance correlation "reduces leakage of sensitive raw data patterns ... while
# maintaining model accuracy". NoPeek at CR 8 is learned 1×1 at CR 8 plus the dCor loss, so learned
# 1×1 is the same client without it; α 0.0001 is the largest swept at which every MNIST seed's victim learns (at
# 0.001 seed 2's stays at chance: defenses/nopeek.py).
FIELD_CLAIMS: list[Claim] = [
    _ordering("nopeek-ssim-below-learned-1x1-cr8", "NoPeek abstract",
              "NoPeek (α 0.0001) reduces what the reference decoder reconstructs below the same code without dCor "
              "(learned 1×1, CR 8)", "ssim", _nopeek("decoder-ref", 0.0001), "<", Selector("learned-1x1", "decoder-ref", 8.0)),
    _ordering("nopeek-keeps-accuracy-cr8", "NoPeek abstract",
              "NoPeek (α 0.0001) keeps ≥ 95% of the accuracy of the same code without dCor (learned 1×1, CR 8)",
              "accuracy", _nopeek("none", 0.0001), ">", Selector("learned-1x1", cr=8.0), factor=0.95),
    _ordering("nopeek-larger-alpha-lower-ssim-cr8", "NoPeek abstract",
              "NoPeek: a larger α (0.001 against 0.0001) lowers the reference decoder's SSIM further", "ssim",
              _nopeek("decoder-ref", 0.001), "<", _nopeek("decoder-ref", 0.0001)),
    # Shredder (arXiv:1905.11814, ASPLOS 2020), abstract: it cuts the input-payload mutual information "while only
    # sacrificing 1.58% loss in accuracy". Shredder at CR 8 is learned 1×1 at CR 8 plus the learned noise.
    _ordering("shredder-ssim-below-learned-1x1-cr8", "Shredder abstract",
              "Shredder (λ 0.5) lowers what the reference decoder reconstructs below the same code without noise "
              "(learned 1×1, CR 8)", "ssim", _shredder("decoder-ref"), "<", Selector("learned-1x1", "decoder-ref", 8.0)),
    _ordering("shredder-loses-at-most-1.58-points-cr8", "Shredder abstract",
              "Shredder (λ 0.5) loses at most 1.58 accuracy points against the same code without noise "
              "(learned 1×1, CR 8)", "accuracy", _shredder("none"), ">", Selector("learned-1x1", cr=8.0), offset=-0.0158),
    # C3-SL (arXiv:2207.12397), abstract: "a 16x compression ratio with negligible accuracy drops compared with
    # the vanilla SL"; read here as keeping ≥ 98% of raw accuracy at R = CR = 16.
    # MID (arXiv:2301.01142), abstract: its experiments "testify the effectiveness of our MID method in defending existing
    # attacks in VFL, including label inference attacks, backdoor attacks and feature reconstruction attacks". Label
    # inference: model completion (its passive attack, 40 labelled samples) against raw's; feature reconstruction: the
    # reference decoder against the same bytes without MID (learned 1×1, CR 8). At its released λ 0.5.
    _ordering("mid-model-completion-below-raw", "MID abstract",
              "MID (λ 0.5) lowers model completion's label accuracy (40 labelled samples) below raw's",
              "label_accuracy", _mid("model-completion"), "<", Selector("raw", "model-completion")),
    _ordering("mid-ssim-below-learned-1x1-cr8", "MID abstract",
              "MID (λ 0.5) lowers what the reference decoder reconstructs below the same bytes without MID "
              "(learned 1×1, CR 8)", "ssim", _mid("decoder-ref"), "<", Selector("learned-1x1", "decoder-ref", 8.0)),
    # DISCO (arXiv:2012.11025, CVPR 2021), abstract: "selectively removing features in this latent space can protect the
    # sensitive information and provide a better privacy-utility trade-off"; its α weighs the proxy's reconstruction
    # loss against the task's, so a larger α should leave less to reconstruct.
    _ordering("disco-larger-alpha-lower-ssim-cr8", "DISCO abstract",
              "DISCO: a larger α (0.75 against 0.25) lowers the reference decoder's SSIM further", "ssim",
              _disco("decoder-ref", 0.75), "<", _disco("decoder-ref", 0.25)),
    # ResSFL (arXiv:2205.04007, CVPR 2022), abstract: attacker-aware training "mitigates MI attack ... with a high
    # reconstruction Mean-Square-Error of 0.050 compared to 0.005 obtained by the baseline system" at "only 1% accuracy
    # drop". Adversarial learning at CR 8 is learned 1×1 at CR 8 trained against its proxy decoder, so learned 1×1 is
    # the baseline system.
    _ordering("adversarial-mse-above-learned-1x1-cr8", "ResSFL abstract",
              "Adversarial learning (λ 0.3) raises the reference decoder's MSE above the same code trained without its "
              "proxy (learned 1×1, CR 8)", "mse", _adversarial("decoder-ref"), ">", Selector("learned-1x1", "decoder-ref", 8.0)),
    _ordering("adversarial-loses-at-most-1-point-cr8", "ResSFL abstract",
              "Adversarial learning (λ 0.3) loses at most 1 accuracy point against the same code trained without its "
              "proxy (learned 1×1, CR 8)", "accuracy", _adversarial("none"), ">", Selector("learned-1x1", cr=8.0),
              offset=-0.01),
    _ordering("c3sl-keeps-98pct-cr16", "C3-SL abstract",
              "C3-SL at R = 16 keeps ≥ 98% of raw accuracy (\"negligible accuracy drops\")", "accuracy",
              Selector("c3sl", cr=16.0), ">", Selector("raw"), factor=0.98),
]

# Label attacks (issue 42). Li et al., "Label Leakage and Protection in Two-party Split Learning" (ICLR 2022,
# arXiv:2102.08504), abstract: norm and direction scoring are "two simple yet effective methods ... that can allow one
# party to accurately recover private ground-truth labels owned by the other party", without protection. Their labels
# are binary; here they are multi-class, scored one-vs-rest and averaged over classes, and "accurately" is read as a
# mean AUC above 0.9 on the undefended (raw) U-shaped run: an ordering against the constant 0.9 (factor 0).
LABEL_CLAIMS: list[Claim] = [
    _ordering(f"{attack}-auc-above-0.9-raw", "Li et al. abstract",
              f"{label} recovers the labels from an undefended run's returned gradients accurately: mean one-vs-rest "
              f"AUC > 0.9 (the paper's labels are binary, here multi-class)", "label_auc_mean",
              Selector("raw", attack), ">", Selector("raw", attack), factor=0.0, offset=0.9)
    for attack, label in (("label-norm", "Norm scoring"), ("label-direction", "Direction scoring"))
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
    *FIELD_CLAIMS,
    *LABEL_CLAIMS,
]
