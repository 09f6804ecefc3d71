"""SDAR's own label inference: its simulated tail ``hs`` on the targets' payloads, scored on every SDAR cell."""
import torch

from bench.run.attack_cell import run_attack_cell
from tests.attacks.test_sdar import PROFILE, make_cell, pre_training_attack, watched


def test_sdar_returns_its_simulated_tails_probabilities_on_the_targets(digits):
    cell = make_cell("raw")
    attack = pre_training_attack(cell, digits)
    view, _ = watched(cell, digits, attack, n_targets=16)
    out = attack.run()
    hs, backbone = attack.nets["hs"].eval(), view.backbone.eval()
    with torch.no_grad():
        expected = hs(backbone(view.lift(view.targets.payloads))).softmax(1)
    assert out.label_scores.shape == (16, view.num_classes) and out.label_top1
    torch.testing.assert_close(out.label_scores, expected)


def test_every_ushaped_sdar_cell_records_label_metrics_and_a_vanilla_one_none(digits, tmp_path):
    ushaped, _ = run_attack_cell(make_cell("raw"), data=digits, profile=PROFILE, cache_dir=tmp_path, artifacts_dir=None)
    assert 0.0 <= ushaped["label_auc_mean"] <= 1.0 and 0.0 <= ushaped["label_accuracy"] <= 1.0
    assert ushaped["label_chance_auc"] == 0.5 and "ssim" in ushaped
    vanilla, _ = run_attack_cell(make_cell("raw", protocol="vanilla"), data=digits, profile=PROFILE, cache_dir=tmp_path,
                                 artifacts_dir=None)
    assert "ssim" in vanilla and not any(k.startswith("label_") for k in vanilla)  # the server holds the labels
