"""The specs of the paper's tables: which row factors, which (attack, metric) columns, how Δ vs Raw shows.

A column names an attack and a metric, or the trained victim's own metric (``attack=None``), or
:data:`WORST`: per row, the most leaking value of the metric over every image attack stored
(:mod:`bench.report.worst_case`), shown with the attack that reached it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.leakage.names import MEASURES

ABS, REL, POINTS, ABS_REL, ABS_RATIO, PCT_OF_RAW = "abs", "rel", "points", "abs+rel", "abs+ratio", "pct-of-raw"
WORST = "worst-case"  # the column of the most leaking image attack per row


def several_clients(clients: float) -> bool:
    """A filter's predicate: at least two clients."""
    return clients >= 2


@dataclass(frozen=True)
class Column:
    """One column: a metric of an attack's cells (``attack=None``: the trained victim's own metric;
    :data:`WORST`: the most leaking image attack's value, always absolute)."""

    attack: str | None
    metric: str
    delta: str = REL


@dataclass(frozen=True)
class TableSpec:
    """What one of the paper's tables shows.

    Attributes:
        name: the paper's numeral ("II").
        title: a short title.
        caption: how to read it, after the paper's caption.
        rows: the row factors (Cell fields), in order.
        columns: the (attack, metric) columns and their Δ display.
        filters: ``(field, values)``: keep cells whose field is in ``values`` (or, when ``values``
            is a predicate, satisfies it) or is unset (so Raw, which sets no knob, stays).
        privacy_positive: relative changes are signed so that + means more privacy.
        unmapped: what the paper's table has that this spec cannot show.
        builder: ``"module:function"`` of a table built another way than
            :func:`bench.report.tables.build_table` builds a spec (same arguments, a ``BuiltTable``
            back); empty for the specs it builds itself.
    """

    name: str
    title: str
    caption: str
    rows: tuple[str, ...]
    columns: tuple[Column, ...]
    filters: tuple[tuple[str, tuple | Callable[[Any], bool]], ...] = ()
    privacy_positive: bool = False
    unmapped: str = ""
    builder: str = ""


def _image_cols(attack: str, metrics: tuple[str, ...], delta: str) -> tuple[Column, ...]:
    return tuple(Column(attack, m, delta) for m in metrics)


SDAR, FORA, FORA_REF, UNSPLIT, FSHA = "sdar", "fora", "decoder-ref", "unsplit", "fsha"
UNSPLIT_HEADLINE = "masked_mse_minmax"  # UnSplit's released scoring: min-max normalised, then masked MSE
TABLES: dict[str, TableSpec] = {spec.name: spec for spec in (
    TableSpec(
        "II", "Privacy and utility vs Raw",
        "Raw is absolute; other rows: Δ accuracy in points, privacy as relative % change vs Raw. "
        "Positive privacy values indicate a privacy increase.",
        ("dataset", "defense", "cr", "lambda_wcc"),
        (Column(None, "accuracy", POINTS), Column(SDAR, "ssim"), *_image_cols(FORA, ("lpips", "ssim"), REL),
         *_image_cols(FORA_REF, ("lpips", "ssim"), REL), Column(UNSPLIT, UNSPLIT_HEADLINE),
         Column(WORST, "ssim", ABS)),
        privacy_positive=True,
    ),
    TableSpec(
        "III", "Privacy attacks at CR 8×",
        "Raw is absolute; other rows are the relative change vs. Raw; arrows point toward more privacy.",
        ("dataset", "defense", "lambda_wcc", "sigma"),
        (*_image_cols(SDAR, ("lpips", "ssim"), REL), *_image_cols(FORA, ("lpips", "ssim"), REL),
         *_image_cols(FORA_REF, ("lpips", "ssim"), REL), Column(UNSPLIT, UNSPLIT_HEADLINE),
         Column(WORST, "ssim", ABS), Column("har-recon", "median_r2"), Column("har-reid", "reid_accuracy")),
        filters=(("cr", (8.0,)),),
    ),
    TableSpec(
        "V", "SDAR reconstruction SSIM under DP",
        "Lower = more private; parentheses give the change relative to Raw at the same cut.",
        ("cut", "defense", "sigma"), (Column(SDAR, "ssim", ABS_REL),),
        filters=(("defense", ("raw", "dp", "raw+dp", "lightsplit-f", "lightsplit-f+dp")), ("cr", (8.0,))),
    ),
    TableSpec(
        "VI", "Block-local projection under four reconstruction attacks",
        "Lower = more private: SDAR as SSIM in % of the matched Raw; FORA, UnSplit and FSHA as SSIM.",
        ("cut", "defense", "tile", "cr", "sigma"),
        (Column(SDAR, "ssim", PCT_OF_RAW), Column(FORA, "ssim", ABS), Column(FORA_REF, "ssim", ABS),
         Column(UNSPLIT, "ssim", ABS), Column(FSHA, "ssim", ABS)),
        filters=(("defense", ("raw", "block-local", "block-local+dp")), ("lambda_wcc", (0.0,))),
    ),
    TableSpec(
        "VIII", "Block-local utility over tile size",
        "Several clients. Raw is absolute accuracy (%); other rows: Δ accuracy (points) vs. the Raw of the "
        "same clients, head ownership and partition. LightSplit-F is the one-tile limit; learned 1×1 the learned baseline.",
        ("dataset", "clients", "heads", "partition", "defense", "tile", "cr"), (Column(None, "accuracy", POINTS),),
        filters=(("defense", ("raw", "learned-1x1", "lightsplit-f", "block-local")), ("lambda_wcc", (0.0,)),
                 ("clients", several_clients)),
        unmapped="the paper pairs the transpose and the learned-MLP lift-back per cell; "
                 "block-local has one lift-back here.",
    ),
    TableSpec(
        "XIII", "FORA: pseudo and white-box reference decoder",
        "Absolute values; the reference decoder also gives the ratio to Raw (×), on which Δ_Raw is computed.",
        ("dataset", "defense", "cr", "lambda_wcc"),
        (*_image_cols(FORA, ("lpips", "ssim"), ABS), Column(FORA_REF, "lpips", ABS_RATIO),
         Column(FORA_REF, "ssim", ABS_REL), Column(FORA_REF, "mse", ABS_RATIO)),
    ),
    TableSpec(
        "XIV", "UnSplit: foreground-masked and whole-image metrics",
        "Absolute values; MSE columns add the relative change vs. Raw in parentheses; min-max columns score "
        "each reconstruction min-max normalised first, as UnSplit's release does.",
        ("dataset", "cut", "defense", "cr", "lambda_wcc"),
        (Column(UNSPLIT, "foreground_ratio", ABS), Column(UNSPLIT, "masked_mse", ABS_REL),
         Column(UNSPLIT, UNSPLIT_HEADLINE, ABS_REL), Column(UNSPLIT, "mse", ABS_REL),
         Column(UNSPLIT, "masked_psnr", ABS), Column(UNSPLIT, "psnr", ABS), Column(UNSPLIT, "box_ssim", ABS),
         Column(UNSPLIT, "box_ssim_minmax", ABS), Column(UNSPLIT, "ssim", ABS)),
    ),
    TableSpec(
        "XV", "FSHA (active, malicious server) at CR 8×",
        "Absolute values; LPIPS and MSE add the ratio to Raw (×). Accuracy is the hijacked run's.",
        ("dataset", "defense", "sigma"),
        (Column(FSHA, "accuracy", ABS), Column(FSHA, "lpips", ABS_RATIO), Column(FSHA, "mse", ABS_RATIO),
         Column(FSHA, "ssim", ABS)),
        filters=(("cr", (8.0,)),),
    ),
    TableSpec(
        "XVI", "Attackers optimized around the public projection",
        "Reconstruction SSIM of decoders reading z, z with the lift-back zRᵀ, z with the gradient g, "
        "and all three fused.",
        ("dataset", "cut", "defense", "cr"),
        tuple(Column(a, "ssim", ABS) for a in ("decoder-z", "decoder-z-lift", "decoder-z-grad", "decoder-fused")),
    ),
    TableSpec(
        "LM", "Language modelling: perplexity inflation over Raw (App. B-B5, Fig. 9)",
        "Best evaluation perplexity over the run (mean ± 95% CI over seeds) and its ratio to the matched Raw "
        "run at the same budget; the cut names the GPT-2 size.",
        ("dataset", "cut", "defense", "cr"),
        (Column(None, "best_val_perplexity", ABS), Column(None, "perplexity_inflation", ABS)),
        unmapped="the paper fine-tunes pretrained GPT-2 (124M-1.5B) on WikiText-103; see results/README.md "
                 "for what a cpu-profile run differs in.",
    ),
    TableSpec(
        "XX", "Full attack sweep: Δ vs. Raw",
        "Raw is absolute; other rows are the relative change vs. Raw; arrows point toward more privacy.",
        ("dataset", "cut", "protocol", "defense", "cr", "lambda_wcc"),
        tuple(Column(a, m) for a in (SDAR, FORA, FORA_REF, "decoder", UNSPLIT) for m in ("mse", "ssim")),
        unmapped="the paper's text gives no caption for Table XX; this is the full (CR, λ_WCC) sweep "
                 "of ΔMSE and ΔSSIM that Fig. 5 plots.",
    ),
)}

# Issue 42's tables, not the paper's, built with the others where the results hold their data: the label attacks
# beside their chance levels, the attack-free measures beside the worst-case SSIM, and how the two rank the defenses.
LEAKAGE_ROWS = ("dataset", "defense", "cr", "sigma")  # and any other factor that varies
TABLES.update({spec.name: spec for spec in (
    TableSpec(
        "LABELS", "Label leakage through the returned tail gradient",
        "Each label attack's label AUC (one-vs-rest, mean over classes) or top-1 accuracy, with its chance level on "
        "the same targets in brackets; higher = more leakage.",
        LEAKAGE_ROWS, (), builder="bench.report.label_table:build_label_table",
    ),
    TableSpec(
        "LEAKAGE", "Attack-free leakage measures beside the worst case",
        "The trained client's own measures, no attack involved (larger = more leakage, but the MSE bound: larger = "
        "more private), beside the most leaking image attack's SSIM. Absolute values.",
        LEAKAGE_ROWS, (*(Column(None, m, ABS) for m in MEASURES), Column(WORST, "ssim", ABS)),
        builder="bench.report.attack_free_table:build_attack_free_table",
    ),
    TableSpec(
        "LEAKAGE-RANK", "Do attack-free measures agree with the worst case?",
        "Rank correlation across the defense configurations of one dataset, victim and cut between each attack-free "
        "measure of Table LEAKAGE, turned so that larger = more leakage (the MSE bound negated), and the worst-case "
        "SSIM: +1, the measure ranks the defenses exactly as the strongest attack does; −1, exactly reversed.",
        ("dataset", "victim", "cut"), (Column(WORST, "ssim", ABS),),
        builder="bench.report.rank_correlation:build_rank_table",
    ),
)})

# Not one of the paper's tables: ``bench report --table demo`` builds it (``make demo`` prints it), and it is
# never among the tables a report writes by default.
DEMO = TableSpec(
    "DEMO", "make demo at a glance",
    "Raw is absolute; other rows: Δ accuracy in points. Worst case: the most leaking image attack's SSIM, with "
    "its name. UnSplit's foreground-masked MSE as returned and min-max normalised first, as its release scores "
    "it. The floor (prior) row is the mean image, which never reads the payload. Arrows point toward more privacy.",
    ("dataset", "defense", "cr"),
    (Column(None, "accuracy", POINTS), Column(None, "bytes_up_per_sample", ABS), Column(WORST, "ssim", ABS),
     Column(UNSPLIT, "masked_mse", ABS), Column(UNSPLIT, UNSPLIT_HEADLINE, ABS)),
)
EXTRA_TABLES: dict[str, TableSpec] = {DEMO.name: DEMO}  # built on request only (``--table``), never by default
