"""An entry's label leakage and attack-free measures, from attack items and entries made by hand: which
label metrics it holds (Table LABELS' rule, at the default budget only), the chance beside each, the page's
rows and the board's two columns (only on a board that has them)."""
from bench.leakage.names import DCOR, DFIL, MEASURES
from bench.site.leakage import (
    attack_free_json,
    attack_free_rows,
    board_cells,
    board_columns,
    label_leakage_json,
    label_rows,
)
from bench.site.pages import board_columns as all_board_columns


def stat(mean, ci=None, note=None):
    return {"mean": mean, "ci95": ci, "n": 0 if mean is None else 3, "n_runs": 3, "n_diverged": 0, "note": note}


def item(attack, headline, settings=None, **metrics):
    return {"attack": attack, "headline_metric": headline, "settings": {"budget": 1.0, **(settings or {})},
            "metrics": {m: stat(v) for m, v in metrics.items()}}


CHANCE = {"label_chance_auc": {"mean": 0.5}, "label_chance_accuracy": {"mean": 0.12}}


def test_label_leakage_holds_what_table_labels_shows_beside_its_chance():
    attacks = [
        item("decoder-ref", "ssim", ssim=0.6),
        item("label-norm", "label_auc_mean", label_auc_mean=0.9, label_accuracy=None),
        item("model-completion", "label_accuracy", {"aux_labels": 100.0}, label_accuracy=0.7, label_auc_mean=0.8),
        item("model-completion", "label_accuracy", {"aux_labels": 10.0}, label_accuracy=0.4, label_auc_mean=0.8),
        item("model-completion", "label_accuracy", {"aux_labels": 10.0, "budget": 4.0}, label_accuracy=0.5),  # a study
        item("sdar", "ssim", label_accuracy=0.3, label_auc_mean=0.7, ssim=0.5),
    ]
    found = label_leakage_json(attacks, [{}, CHANCE, CHANCE, CHANCE, CHANCE, {}])
    assert [(i["attack"], i["settings"], i["metric"], i["chance"]) for i in found] == [
        ("label-norm", {}, "label_auc_mean", 0.5),
        ("model-completion", {"aux_labels": 10.0}, "label_accuracy", 0.12),
        ("model-completion", {"aux_labels": 100.0}, "label_accuracy", 0.12),
        ("sdar", {}, "label_accuracy", None),  # its chance not stored
    ]
    rows = label_rows({"label_leakage": found})
    assert [(r["settings"], r["measured"], r["chance"]) for r in rows] == [
        ("—", "0.900", "0.500"), ("aux_labels=10", "40.0", "12.0"), ("aux_labels=100", "70.0", "12.0"), ("—", "30.0", "—")]
    assert label_leakage_json([attacks[0]], [{}]) == []


def test_attack_free_measures_in_order_with_the_reason_an_absent_one_is_absent():
    rows = {DFIL: {"mean": float("nan"), "ci": float("nan"), "n": 0, "n_runs": 3, "n_diverged": 0, "note": "no noise"},
            DCOR: {"mean": 0.9, "ci": 0.01, "n": 3, "n_runs": 3, "n_diverged": 0, "note": None}}
    found = attack_free_json(rows)
    assert list(found) == [DCOR, DFIL] and found[DFIL]["mean"] is None and attack_free_json({}) is None
    shown = attack_free_rows({"attack_free": found})
    assert shown == [{"measure": "dCor", "value": "0.900 ± 0.010", "meaning": MEASURES[DCOR]},
                     {"measure": "dFIL", "value": "— (no noise)", "meaning": MEASURES[DFIL]}]


def entry(**extra):
    return {"accuracy": {}, "worst_case": {}, **extra}


def test_the_board_shows_the_two_columns_only_where_an_entry_has_them():
    worst = {"label_auc_mean": {"attack": "label-direction", "stat": stat(0.98, 0.01)}}
    with_both = entry(worst_case=worst, attack_free={DCOR: stat(0.9)})
    assert board_columns([entry(), with_both]) == [("label", "Worst label AUC", "num"), ("dcor", "dCor", "num")]
    assert board_columns([entry(), entry(attack_free={DCOR: stat(None)})]) == []
    keys = [k for k, _, _ in all_board_columns([with_both], "ssim")]
    assert keys[keys.index("floor") + 1: keys.index("seeds")] == ["label", "dcor"]
    headers = {k: text for k, text, _ in all_board_columns([with_both], "ssim")}
    assert headers["label"] == "Worst label AUC ↓" and headers["dcor"] == "dCor ↓"
    cells = board_cells(with_both)
    assert (cells["label"].text, cells["label"].sort, cells["dcor"].text) == ("0.980 ± 0.010", 0.98, "0.900")
    assert "label-direction" in cells["label"].title and board_cells(entry())["label"].text == "—"
