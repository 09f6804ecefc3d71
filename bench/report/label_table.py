"""The label-leakage table (``bench report --table LABELS``): per defense configuration, how well each
label attack names the targets' labels from what the server receives, beside its chance level.

The columns come from the rows' own facts, never from attack names (:func:`label_columns`): every
attack whose rows record a label metric (scored by ``bench.metrics.labels``) shows

- its headline metric (``Attack.headline_metric``, recorded on its rows) where that is a label metric:
  norm and direction scoring's AUC, model completion's accuracy;
- its top-1 accuracy wherever it records one with a value: direction scoring, and SDAR, whose
  headline is SSIM (norm scoring makes no class decision: its accuracy is never a number);

one column per setting, for each knob whose value varies among the attack's cells (model completion's
``aux_labels``), at the default of every knob that tunes the attacker (the budget at
``attack_budget``). A value is the mean ± 95% CI over seeds (diverged runs left out) with the chance
level of the same cells in brackets: the rows' ``label_chance_auc`` (0.5) and
``label_chance_accuracy`` (the share of the targets' most common class). Each value carries the mark
of its attack's convergence verdict (:mod:`bench.report.convergence`), as in the paper's tables.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bench.attack_knobs import ATTACKER_TUNING_KNOBS
from bench.report.aggregate import aggregate, at_default_settings, config_key, ok_rows, select_profile
from bench.report.budgets import AttackBudget
from bench.report.convergence import judge_at, legend
from bench.report.failures import failure_notes
from bench.report.labels import FACTOR_LABELS, attack_label, defense_rank, factor_value, metric_label, number
from bench.report.table_specs import ABS, Column, TableSpec
from bench.report.tables import (
    CONVERGENCE,
    DASH,
    NUMBER_COLUMNS,
    BuiltTable,
    _cell_text,
    _factors,
    _mark,
    budget_suffix,
    row_fields,
)
from bench.run.table import ATTACK_KNOB_PREFIX, headline_metrics

LABEL_AUC, LABEL_ACCURACY = "label_auc_mean", "label_accuracy"  # bench.metrics.labels (which imports torch's stack)
LABEL_METRICS = (LABEL_AUC, LABEL_ACCURACY)
CHANCE = {LABEL_AUC: "label_chance_auc", LABEL_ACCURACY: "label_chance_accuracy"}  # each metric's chance level
TUNING = frozenset(ATTACK_KNOB_PREFIX + k.name for k in ATTACKER_TUNING_KNOBS)
CHANCE_NOTE = ("In brackets: the chance level of the same cells (AUC 0.5, any score that ignores the sample; accuracy: "
               "the share of the targets' most common class, what always guessing it scores). The paper behind norm and "
               "direction scoring (Li et al., ICLR 2022) scores binary labels; here AUC is one-vs-rest, averaged over classes.")


def shown_label_metrics(headline: str | None, recorded: Mapping[str, bool]) -> list[str]:
    """The label metrics an attack's column(s) show: its headline where that is a label metric, and
    its top-1 accuracy where it has a value (``recorded``: label metric → whether any value is finite)."""
    return [m for m in LABEL_METRICS if m in recorded and (m == headline or (m == LABEL_ACCURACY and recorded[m]))]


@dataclass(frozen=True)
class LabelColumn:
    """One column: a label metric of an attack at one setting of its varying knobs."""

    attack: str
    settings: tuple[tuple[str, object], ...]  # (attack knob column, value), only knobs that vary
    metric: str

    @property
    def knobs(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.settings)

    @property
    def group(self) -> str:
        """``model completion (aux_labels 10)``: the attack's name and its setting."""
        text = ", ".join(f"{k.removeprefix(ATTACK_KNOB_PREFIX)} {factor_value(k, v)}" for k, v in self.settings)
        return attack_label(self.attack) + (f" ({text})" if text else "")


def label_attacks(table: pd.DataFrame) -> list[str]:
    """The attacks of ``table`` that infer labels: headline a label metric first, then any other attack
    that records one (SDAR's simulated head), each group by name."""
    headlines = headline_metrics(table)
    recording = set(table.loc[table["metric"].isin(LABEL_METRICS), "attack"].dropna())
    named = {a for a, m in headlines.items() if m in LABEL_METRICS}
    return sorted(named | recording, key=lambda a: (headlines.get(a) not in LABEL_METRICS, a))


def label_columns(rows: pd.DataFrame) -> list[LabelColumn]:
    """The columns of the successful label-attack ``rows`` (:func:`shown_label_metrics` per attack, one
    per setting of its varying knobs, settings in ascending order)."""
    headlines = headline_metrics(rows)
    columns = []
    for attack in label_attacks(rows):
        mine = rows[(rows["attack"] == attack) & rows["metric"].isin(LABEL_METRICS)]
        finite = mine.assign(_finite=np.isfinite(mine["value"].astype(float))).groupby("metric")["_finite"].any()
        metrics = shown_label_metrics(headlines.get(attack), finite.to_dict())
        knobs = [c for c in mine.columns if c.startswith(ATTACK_KNOB_PREFIX) and c not in TUNING and mine[c].nunique() > 1]
        settings = sorted({_settings(r, knobs) for r in mine.to_dict("records")},
                          key=lambda s: [(v is None, isinstance(v, str), v if v is not None else 0) for v in s])
        columns += [LabelColumn(attack, tuple(zip(knobs, s)), m) for s in settings for m in metrics]
    return columns


def build_label_table(table: pd.DataFrame, spec: TableSpec, profile: str | None = None, *,
                      attack_budget: AttackBudget = 1.0) -> BuiltTable:
    """The label-leakage table of ``table`` (the module says what it shows); ``spec`` gives its name,
    caption and row factors. A table without label attacks has an empty body."""
    table = select_profile(table, profile)
    attacks = label_attacks(table)
    stored = table[table["attack"].isin(attacks)]
    rows = at_default_settings(ok_rows(stored), budget=attack_budget)
    columns = label_columns(rows)
    metrics = [*LABEL_METRICS, *CHANCE.values()]
    agg = aggregate(rows, metrics=metrics) if len(rows) else pd.DataFrame(columns=["attack", "metric"])
    fields = row_fields(agg) if len(agg) else ()
    knobs = {c.attack: c.knobs for c in columns}
    cells = {(config_key(r, fields), r["attack"], _settings(r, knobs.get(r["attack"], ())), r["metric"]): r
             for r in agg.to_dict("records")}
    configs = agg[list(fields)].drop_duplicates() if len(agg) else pd.DataFrame()
    factors = _factors(configs, spec.rows, fields) if len(configs) else []
    if factors:
        configs = configs.sort_values(factors, key=lambda s: s.map(defense_rank) if s.name == "defense" else s,
                                      na_position="first")
    varying = sorted({k for c in columns for k in c.knobs})
    judged = judge_at(stored, by=[f for f in (*fields, *varying) if f in stored], budget=attack_budget)
    verdicts = {(config_key(r, fields), r["attack"], _settings(r, knobs.get(r["attack"], ()))): r[CONVERGENCE]
                for r in judged.to_dict("records")}
    footnotes: list[str] = []
    body, numbers = [], []
    for config in configs.to_dict("records"):
        key = config_key(config, fields)
        line: list[str] = [factor_value(f, config[f]) for f in factors]
        for col in columns:
            settings = tuple(v for _, v in col.settings)
            r = cells.get((key, col.attack, settings, col.metric))
            chance = cells.get((key, col.attack, settings, CHANCE[col.metric]))
            verdict = verdicts.get((key, col.attack, settings))
            line.append(_shown(r, chance, col, verdict, spec, footnotes))
            if r is not None:
                numbers.append({**{f: config[f] for f in factors}, "attack": col.attack,
                                "settings": ", ".join(f"{k.removeprefix(ATTACK_KNOB_PREFIX)}={factor_value(k, v)}"
                                                      for k, v in col.settings),
                                **{k: r[k] for k in NUMBER_COLUMNS[1:]},
                                "chance": chance["mean"] if chance is not None else np.nan,
                                CONVERGENCE: verdict.verdict if verdict else None})
        body.append(line)
    header = [("", FACTOR_LABELS.get(f, f)) for f in factors]
    header += [(c.group + budget_suffix(rows, c.attack, attack_budget), metric_label(c.metric)) for c in columns]
    notes = [CHANCE_NOTE] if columns else []
    shown = {v.verdict for v in verdicts.values()}
    notes += [legend(sorted(shown), budget=attack_budget)] if shown and columns else []
    notes += failure_notes(at_default_settings(stored, budget=attack_budget))
    missing = [] if columns else [f"label attacks (no stored cell records {' or '.join(LABEL_METRICS)})"]
    seeds = tuple(sorted(int(s) for s in rows["seed"].unique())) if len(rows) else ()
    profile_name = str(table["profile"].iloc[0]) if len(table) else (profile or "")
    return BuiltTable(spec, profile_name, seeds, header, pd.DataFrame(body, columns=[f"{g}: {m}" if g else m for g, m in header]),
                      pd.DataFrame(numbers, columns=None if numbers else [*NUMBER_COLUMNS, "settings", "chance"]),
                      len(factors), footnotes, missing, notes, attack_budget)


def _settings(record: Mapping, knobs: Iterable[str]) -> tuple:
    return tuple(config_key(record, tuple(knobs)))


def _shown(r: Mapping | None, chance: Mapping | None, col: LabelColumn, verdict, spec: TableSpec,
           footnotes: list[str]) -> str:
    """One cell: ``mean ± ci`` with its convergence mark and ``[chance]``, or a dash with its footnote."""
    if r is None:
        return _mark((DASH, "no stored cell of this attack and setting"), footnotes)
    text = _cell_text(r, Column(col.attack, col.metric, ABS), spec)
    if not isinstance(text, str):
        return _mark(text, footnotes)
    text += verdict.mark if verdict else ""
    if chance is not None and np.isfinite(chance["mean"]):
        text += f" [{number(chance['mean'], col.metric)}]"
    if r["n_diverged"]:
        return _mark((text, f"{r['n_diverged']} of {r['n_runs']} runs diverged (left out)"), footnotes)
    return text
