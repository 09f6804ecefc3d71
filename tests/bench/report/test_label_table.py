"""Table LABELS from a tidy table made by hand: which columns the rows' facts give (never the attacks'
names), each value's mean ± CI beside its chance level, and what an empty or failed grid shows.

Three seeds per configuration: values ``a − d, a, a + d`` show ``a ± 2.4841·d`` (t(0.975, 2) = 4.3027, /√3).
"""
import pandas as pd

from bench.report.convergence import MARKS, UNKNOWN
from bench.report.label_table import LabelColumn, label_columns, shown_label_metrics
from bench.report.render import to_csv, to_markdown
from bench.report.tables import TABLES, build_table
from bench.run.cell import Cell
from bench.run.record import FAILED, CellRecord
from tests.bench.report.handmade import runs, tidy

CHANCE_ACC = {"label_chance_auc": (0.5, 0.5, 0.5), "label_chance_accuracy": (0.12, 0.12, 0.12)}
NO_TOP1 = "the attack's per-class scores make no class decision (norm scoring): no top-1"


def grid(*extra):
    """Raw and LightSplit-F at CR 8 under norm scoring (AUC only), model completion at 10 and 100 labelled
    samples, SDAR (headline SSIM, with its own label scores) and the reference decoder (no label metric)."""
    parts = []
    for defense, knobs, shift in (("raw", {}, 0.0), ("lightsplit-f", {"cr": 8.0}, -0.2)):
        parts += [
            runs("label-norm", defense, values={"label_auc_mean": (0.89 + shift, 0.90 + shift, 0.91 + shift),
                                               "label_accuracy": (None, None, None), **CHANCE_ACC},
                 notes={"label_accuracy": NO_TOP1}, **knobs),
            *[runs("model-completion", defense, setting={"attack_knobs": {"aux_labels": n}}, **knobs,
                   values={"label_accuracy": (a - 0.02, a, a + 0.02), "label_auc_mean": (0.8, 0.8, 0.8), **CHANCE_ACC})
              for n, a in ((100, 0.70 + shift), (10, 0.40 + shift))],
            runs("sdar", defense, values={"ssim": (0.5, 0.5, 0.5), "label_accuracy": (0.30, 0.30, 0.30),
                                          "label_auc_mean": (0.7, 0.7, 0.7), **CHANCE_ACC}, **knobs),
            runs("decoder-ref", defense, values={"ssim": (0.6, 0.6, 0.6)}, **knobs),
        ]
    return tidy(*parts, *extra)


def unmarked(built):
    return [[str(v).replace(MARKS[UNKNOWN], "") for v in row] for row in built.body.values.tolist()]


def test_columns_come_from_the_rows_headline_and_recorded_label_metrics():
    columns = label_columns(grid())
    assert columns == [
        LabelColumn("label-norm", (), "label_auc_mean"),  # its accuracy is never a number: no column
        LabelColumn("model-completion", (("attack_aux_labels", 10.0),), "label_accuracy"),  # headline only, in order
        LabelColumn("model-completion", (("attack_aux_labels", 100.0),), "label_accuracy"),
        LabelColumn("sdar", (), "label_accuracy"),  # headline SSIM: its top-1 only
    ]
    assert shown_label_metrics("label_auc_mean", {"label_auc_mean": True, "label_accuracy": True}) == [
        "label_auc_mean", "label_accuracy"]  # direction scoring: both


def test_each_value_is_mean_and_ci_over_seeds_beside_its_chance_level():
    built = build_table(grid(), TABLES["LABELS"])
    assert list(built.body.columns) == [
        "Dataset", "Defense", "CR", "norm scoring: label AUC ↓",
        "model completion (aux_labels 10): label acc. (%) ↓", "model completion (aux_labels 100): label acc. (%) ↓",
        "SDAR: label acc. (%) ↓"]
    assert unmarked(built) == [
        ["MNIST", "Raw", "", "0.900 ± 0.025 [0.500]", "40.0 ± 5.0 [12.0]", "70.0 ± 5.0 [12.0]", "30.0 ± 0.0 [12.0]"],
        ["MNIST", "LightSplit-F", "8×", "0.700 ± 0.025 [0.500]", "20.0 ± 5.0 [12.0]", "50.0 ± 5.0 [12.0]", "30.0 ± 0.0 [12.0]"],
    ]
    numbers = built.numbers
    assert set(numbers["settings"]) == {"", "aux_labels=10", "aux_labels=100"}
    assert sorted(numbers["chance"].unique()) == [0.12, 0.5]
    assert "chance" in to_csv(built).splitlines()[0]
    assert built.has_defended_rows and "In brackets: the chance level" in to_markdown(built)


def test_a_missing_setting_and_a_failed_configuration_are_explained():
    failed = CellRecord(Cell(dataset="mnist", victim="mnistnet", cut="split-2", defense="topk", profile="cpu", seed=0,
                             attack="label-norm", defense_knobs={"cr": 8.0}), FAILED, error="ValueError: no tail gradient")
    table = grid(runs("model-completion", "raw", cut="split-4", setting={"attack_knobs": {"aux_labels": 10}},
                      values={"label_accuracy": (0.5, 0.5, 0.5)}))
    table = pd.concat([table, tidy([failed])], ignore_index=True)
    built = build_table(table, TABLES["LABELS"])
    split4 = [row for row in unmarked(built) if "split-4" in row]
    assert split4[0][-3:] == ["50.0 ± 0.0", "—¹", "—¹"]  # no chance stored: none shown; no aux_labels 100 or SDAR cell
    assert built.footnotes == ["no stored cell of this attack and setting"]
    assert any(n.startswith("No result for") and "no tail gradient" in n for n in built.notes)


def test_results_without_label_attacks_give_an_empty_table():
    built = build_table(tidy(runs("decoder-ref", values={"ssim": (0.6, 0.6, 0.6)})), TABLES["LABELS"])
    assert built.body.empty and not built.has_defended_rows
    assert built.missing == ["label attacks (no stored cell records label_auc_mean or label_accuracy)"]
    assert "_No stored cell has data for this table._" in to_markdown(built)
