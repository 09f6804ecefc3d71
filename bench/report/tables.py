"""The paper's tables: one frozen spec per table, built into formatted strings from the aggregate.

A spec names the row factors, the (attack, metric) columns and how each column shows Δ vs Raw. The
Raw row of every table is absolute. Factors not named by a spec but varying in the results become
extra row factors, so no two configurations ever share a row. A column whose attack (or metric)
has no stored cell is left out and listed as missing; a cell without a value is "—" with a
footnote saying why (no stored cell, the stored reason of a missing value, all runs diverged).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from bench.report.aggregate import aggregate, ok_rows, select_profile, victim_fields, victim_view
from bench.report.labels import (
    ATTACK_LABELS,
    FACTOR_LABELS,
    MINUS,
    PRIVACY_DIRECTION,
    defense_rank,
    factor_value,
    metric_label,
    number,
)

ABS, REL, POINTS, ABS_REL, ABS_RATIO, PCT_OF_RAW = "abs", "rel", "points", "abs+rel", "abs+ratio", "pct-of-raw"
DASH = "—"
SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
NUMBER_COLUMNS = ["attack", "metric", "mean", "ci", "n", "n_runs", "n_diverged", "delta", "delta_ci", "rel",
                  "rel_ci", "n_pairs", "note"]


def row_fields(agg: pd.DataFrame) -> tuple[str, ...]:
    """The factors a table's rows can vary in: every configuration field but the attack, its
    settings and the profile (a row shows a victim's metrics beside its attacks' columns)."""
    return tuple(f for f in victim_fields(agg) if f != "profile")


@dataclass(frozen=True)
class Column:
    """One column: a metric of an attack's cells (``attack=None``: the trained victim's own metric)."""

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
        filters: ``(field, values)``: keep cells whose field is in ``values`` or unset (so Raw,
            which sets no knob, stays).
        privacy_positive: relative changes are signed so that + means more privacy.
        unmapped: what the paper's table has that this spec cannot show.
    """

    name: str
    title: str
    caption: str
    rows: tuple[str, ...]
    columns: tuple[Column, ...]
    filters: tuple[tuple[str, tuple], ...] = ()
    privacy_positive: bool = False
    unmapped: str = ""


@dataclass
class BuiltTable:
    """A table ready to render: strings for show, numbers for CSV, footnotes and what is missing."""

    spec: TableSpec
    profile: str
    seeds: tuple[int, ...]
    header: list[tuple[str, str]]
    body: pd.DataFrame
    numbers: pd.DataFrame
    n_factors: int = 0
    footnotes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def has_defended_rows(self) -> bool:
        """Whether a row other than Raw shows up (Raw alone compares nothing)."""
        return bool(len(self.numbers)) and bool((self.numbers["defense"] != "raw").any()) if "defense" in self.numbers else False

    @property
    def caption(self) -> str:
        runs = self.numbers["n_runs"] if len(self.numbers) else pd.Series([len(self.seeds)])
        low, high = int(runs.min()), int(runs.max())
        seeds = f"{high} seed{'s' if high != 1 else ''}" if low == high else f"{low}–{high} seeds per configuration"
        return (f"Table {self.spec.name}: {self.spec.title}. {self.spec.caption} Profile '{self.profile}', "
                f"{seeds}; mean ± 95% CI over seeds (Student t).")


def _image_cols(attack: str, metrics: tuple[str, ...], delta: str) -> tuple[Column, ...]:
    return tuple(Column(attack, m, delta) for m in metrics)


SDAR, FORA, FORA_REF, UNSPLIT, FSHA = "sdar", "fora", "decoder-ref", "unsplit", "fsha"
TABLES: dict[str, TableSpec] = {spec.name: spec for spec in (
    TableSpec(
        "II", "Privacy and utility vs Raw",
        "Raw is absolute; other rows: Δ accuracy in points, privacy as relative % change vs Raw. "
        "Positive privacy values indicate a privacy increase.",
        ("dataset", "defense", "cr", "lambda_wcc"),
        (Column(None, "accuracy", POINTS), Column(SDAR, "ssim"), *_image_cols(FORA, ("lpips", "ssim"), REL),
         *_image_cols(FORA_REF, ("lpips", "ssim"), REL), Column(UNSPLIT, "masked_mse")),
        privacy_positive=True,
    ),
    TableSpec(
        "III", "Privacy attacks at CR 8×",
        "Raw is absolute; other rows are the relative change vs. Raw; arrows point toward more privacy.",
        ("dataset", "defense", "lambda_wcc", "sigma"),
        (*_image_cols(SDAR, ("lpips", "ssim"), REL), *_image_cols(FORA, ("lpips", "ssim"), REL),
         *_image_cols(FORA_REF, ("lpips", "ssim"), REL), Column(UNSPLIT, "masked_mse"),
         Column("har-recon", "median_r2"), Column("har-reid", "reid_accuracy")),
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
        "Raw is absolute accuracy (%); other rows: Δ accuracy (points) vs. matched Raw.",
        ("dataset", "heads", "defense", "tile", "cr"), (Column(None, "accuracy", POINTS),),
        filters=(("defense", ("raw", "block-local")), ("lambda_wcc", (0.0,))),
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
        "Absolute values; MSE columns add the relative change vs. Raw in parentheses.",
        ("dataset", "cut", "defense", "cr", "lambda_wcc"),
        (Column(UNSPLIT, "foreground_ratio", ABS), Column(UNSPLIT, "masked_mse", ABS_REL),
         Column(UNSPLIT, "mse", ABS_REL), Column(UNSPLIT, "masked_psnr", ABS), Column(UNSPLIT, "psnr", ABS),
         Column(UNSPLIT, "box_ssim", ABS), Column(UNSPLIT, "ssim", ABS)),
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
        "XX", "Full attack sweep: Δ vs. Raw",
        "Raw is absolute; other rows are the relative change vs. Raw; arrows point toward more privacy.",
        ("dataset", "cut", "protocol", "defense", "cr", "lambda_wcc"),
        tuple(Column(a, m) for a in (SDAR, FORA, FORA_REF, "decoder", UNSPLIT) for m in ("mse", "ssim")),
        unmapped="the paper's text gives no caption for Table XX; this is the full (CR, λ_WCC) sweep "
                 "of ΔMSE and ΔSSIM that Fig. 5 plots.",
    ),
)}


def _keep(frame: pd.DataFrame, filters: tuple[tuple[str, tuple], ...]) -> pd.DataFrame:
    for name, values in filters:
        frame = frame[frame[name].isna() | frame[name].isin(list(values))]
    return frame


def _cell_text(row: pd.Series, col: Column, spec: TableSpec) -> str | tuple[str, str]:
    """The shown text of one cell, or ``(DASH, reason)`` when there is nothing to show."""
    if row["n"] == 0:
        if row["n_runs"] and row["n_diverged"] == row["n_runs"]:
            return DASH, f"all {row['n_runs']} runs diverged"
        return DASH, row["note"] or "no finite value stored"
    m, metric = row["mean"], col.metric
    absolute = number(m, metric) + ("" if math.isnan(row["ci"]) else f" ± {number(row['ci'], metric)}")
    if col.delta == ABS or row["is_raw"]:
        return absolute
    if row["n_pairs"] == 0:
        return DASH, "no matched Raw run to compare with"
    ci = lambda v, unit="": "" if math.isnan(v) else f" ± {v:.1f}{unit}"  # noqa: E731
    rel, rel_ci = row["rel"], row["rel_ci"]
    if col.delta == REL:
        sign = PRIVACY_DIRECTION.get(metric, 1) if spec.privacy_positive else 1
        return f"{sign * rel:+.1f}{ci(rel_ci)}%".replace("-", MINUS)
    if col.delta == POINTS:
        return number(row["delta"], metric, signed=True) + ("" if math.isnan(row["delta_ci"]) else f" ± {number(row['delta_ci'], metric)}")
    if col.delta == ABS_REL:
        return f"{absolute} ({rel:+.1f}%)".replace("-", MINUS)
    if col.delta == ABS_RATIO:
        return f"{absolute} (×{1 + rel / 100:.2f})".replace("-", MINUS)
    if col.delta == PCT_OF_RAW:
        return f"{100 + rel:.1f}{ci(rel_ci)}%".replace("-", MINUS)
    raise ValueError(f"unknown delta display '{col.delta}'")


def build_table(table: pd.DataFrame, spec: TableSpec, profile: str | None = None) -> BuiltTable:
    """Build one table from the tidy table.

    Args:
        table: the tidy result table.
        spec: the table to build.
        profile: the profile to report (required when the table holds several).

    Returns:
        The built table; its body is empty when no column has data.

    Raises:
        ValueError: mixed profiles without ``profile``, or an absent profile.
    """
    table = select_profile(table, profile)
    attacks = {c.attack for c in spec.columns if c.attack is not None}
    metrics = {c.metric for c in spec.columns}
    parts = []
    if any(c.attack is None for c in spec.columns):
        parts.append(aggregate(victim_view(table), metrics=metrics).assign(attack=None))
    parts.append(aggregate(table[table["attack"].isin(attacks)], metrics=metrics))
    agg = _keep(pd.concat([p for p in parts if not p.empty] or [parts[-1]], ignore_index=True), spec.filters)
    present, missing = [], []
    for col in spec.columns:
        mine = agg[(agg["attack"].isna() if col.attack is None else agg["attack"] == col.attack)]
        if mine.empty:
            missing.append(f"{ATTACK_LABELS.get(col.attack, col.attack)} (no stored cell with attack '{col.attack}')"
                           if col.attack else "the victims' metrics (no stored cell)")
        elif (mine["metric"] == col.metric).any():
            present.append(col)
        else:
            label = f"{ATTACK_LABELS.get(col.attack or 'none', col.attack)} {metric_label(col.metric)}"
            missing.append(f"{label.strip()} (never recorded)")
    missing = list(dict.fromkeys(missing))
    wanted = {(c.attack, c.metric) for c in present}
    records = [r for r in agg.to_dict("records") if (_none(r["attack"]), r["metric"]) in wanted]
    fields = row_fields(agg)
    cells = {(_key(r, fields), _none(r["attack"]), r["metric"]): r for r in records}
    stored = {(_key(r, fields), _none(r["attack"])) for r in records}
    fields = row_fields(agg)
    configs = pd.DataFrame(records, columns=list(fields))[list(fields)].drop_duplicates()
    factors = _factors(configs, spec.rows, fields)
    configs = configs.sort_values(
        factors, key=lambda s: s.map(defense_rank) if s.name == "defense" else s, na_position="first"
    ) if len(configs) else configs
    header = [("", FACTOR_LABELS.get(f, f)) for f in factors]
    header += [(ATTACK_LABELS.get(c.attack or "none", c.attack or ""), metric_label(c.metric)) for c in present]
    footnotes: list[str] = []
    body_rows, numbers = [], []
    for config in configs.to_dict("records"):
        key = _key(config, fields)
        line = [factor_value(f, config[f]) for f in factors]
        for col in present:
            r = cells.get((key, col.attack, col.metric))
            if r is None:
                text = (DASH, "metric not recorded by this cell" if (key, col.attack) in stored else "no stored cell")
            else:
                text = _cell_text(r, col, spec)
                numbers.append({**{f: config[f] for f in factors}, "attack": col.attack or "none",
                                **{k: r[k] for k in NUMBER_COLUMNS[1:]}})
                if isinstance(text, str) and r["n_diverged"]:
                    text = (text, f"{r['n_diverged']} of {r['n_runs']} runs diverged (left out)")
            line.append(text if isinstance(text, str) else _mark(text, footnotes))
        body_rows.append(line)
    labels = [f"{g}: {m}" if g else m for g, m in header]
    body = pd.DataFrame(body_rows, columns=labels)
    numbers_frame = pd.DataFrame(numbers, columns=None if numbers else NUMBER_COLUMNS)
    profile_name = str(table["profile"].iloc[0]) if len(table) else (profile or "")
    return BuiltTable(spec, profile_name, _seeds(table, spec, present), header, body, numbers_frame, len(factors),
                      footnotes, missing)


def _none(value: object) -> object:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _key(record: dict, fields: tuple[str, ...]) -> tuple:
    """A configuration as a hashable key (every unset value as None)."""
    return tuple(_none(record.get(f)) for f in fields)


def _factors(configs: pd.DataFrame, rows: tuple[str, ...], fields: tuple[str, ...]) -> list[str]:
    """The spec's row factors plus every other factor that varies, so that no two rows coincide."""
    rows = tuple(f for f in rows if f in configs and configs[f].notna().any())  # a knob no shown cell sets: no column
    factors = [*rows, *(f for f in fields if f not in rows and configs[f].nunique() > 1)]
    if configs[factors].duplicated().any():  # e.g. a knob set in one row and unset in another
        factors += [f for f in fields if f not in factors and configs[f].nunique(dropna=False) > 1]
    return factors


def _mark(text: tuple[str, str], footnotes: list[str]) -> str:
    """``text`` with the superscript number of its footnote (added once)."""
    shown, reason = text
    if reason not in footnotes:
        footnotes.append(reason)
    return shown + str(footnotes.index(reason) + 1).translate(SUPERSCRIPTS)


def _seeds(table: pd.DataFrame, spec: TableSpec, present: list[Column]) -> tuple[int, ...]:
    """The seeds of the stored runs behind the shown columns."""
    rows = _keep(ok_rows(table), spec.filters)
    if not any(c.attack is None for c in present):
        rows = rows[rows["attack"].isin([c.attack for c in present])]
    return tuple(sorted(int(s) for s in rows["seed"].unique()))
