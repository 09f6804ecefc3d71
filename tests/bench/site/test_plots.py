"""The site's plots: Pareto panels per bytes group with CIs and labels that never overlap; convergence
as small multiples, one panel per configuration."""
from __future__ import annotations

import random

import matplotlib.image as mpimg
import pytest

from bench.site.plots import convergence_plot, convergence_series, pareto_plot, pareto_points, spread


def stat(mean, ci=0.01):
    return {"mean": mean, "ci95": ci, "n": 3, "n_diverged": 0, "n_runs": 3, "note": None}


def entry(name, label, group, accuracy, ssim, attacks=(), ranked=True):
    return {"entry_id": f"{label}-{group}", "dataset": "mnist", "profile": "cpu", "victim": "mnistnet", "cut": "split-2",
            "setting": {"protocol": "ushaped", "heads": "sch", "partition": "iid", "alpha": None, "clients": 1},
            "defense": {"name": name, "label": label, "knobs": {} if group == 1 else {"cr": float(group)}},
            "label": label, "accuracy": stat(accuracy), "worst_case": {"ssim": {"stat": stat(ssim, 0.05)}},
            "ranking": {"metric": "ssim", "direction": -1, "value": ssim, "attack": "decoder-ref", "n": 3, "ranked": ranked},
            "bytes_group": {"group_cr": float(group), "bytes": 4608.0 / group}, "attacks": list(attacks)}


def board():
    return [entry("raw", "Raw", 1, 0.97, 0.98), entry("raw+dp", "Raw+DP", 1, 0.96, 0.87),
            *[entry(d, f"{d} (CR {cr}×)", cr, 0.90 + 0.01 * i, 0.80 + 0.01 * i)
              for cr in (8, 16) for i, d in enumerate(("lightsplit-f", "top-k", "learned-1x1", "lightsplit-l"))]]


def test_pareto_points_are_optimal_within_their_bytes_group_only():
    points = pareto_points(board())
    assert set(points["group_text"]) == {"uncompressed (measured CR 1×)", "measured CR 8×", "measured CR 16×"}
    # raw is optimal among the uncompressed rows, though every compressed row leaks less
    assert points.set_index("label").loc["Raw", "optimal"]
    assert points.groupby("group")["optimal"].any().all()
    assert (points["leakage_ci"] == 0.05).all() and (points["accuracy_ci"] == 0.01).all()


def test_a_row_with_a_victim_at_chance_never_sets_the_pareto_front():
    """MID at chance leaks least; ranked, it would be optimal. Unranked, the ranked rows keep the front."""
    dead = entry("mid", "MID (CR 8×)", 8, 0.11, 0.09, ranked=False)
    points = pareto_points([*board(), dead]).set_index("label")
    assert not points.loc["MID (CR 8×)", "optimal"] and not points.loc["MID (CR 8×)", "ranked"]
    assert points.loc["lightsplit-f (CR 8×)", "optimal"]  # least leakage among the ranked CR 8 rows
    ranked = pareto_points([*board(), entry("mid", "MID (CR 8×)", 8, 0.11, 0.09)]).set_index("label")
    assert ranked.loc["MID (CR 8×)", "optimal"]


def test_pareto_plot_draws_one_panel_per_bytes_group_of_the_defense(tmp_path):
    two = pareto_plot(board(), defense="lightsplit-f", path=tmp_path / "f.png")
    one = pareto_plot(board(), defense="raw", path=tmp_path / "raw.png")
    assert pareto_plot(board(), defense="dp", path=tmp_path / "none.png") is None
    # two stacked panels (CR 8 and 16) are taller than raw's one (uncompressed only)
    assert mpimg.imread(two).shape[0] > 1.5 * mpimg.imread(one).shape[0]


@pytest.mark.parametrize("seed", range(5))
def test_spread_keeps_order_gap_and_bounds(seed):
    rng = random.Random(seed)
    positions = [rng.uniform(0, 10) for _ in range(12)] + [5.0] * 4
    placed = spread(positions, 0.5, 0.0, 10.0)
    ordered = sorted(range(len(positions)), key=lambda i: positions[i])
    ys = [placed[i] for i in ordered]
    assert all(b - a >= 0.5 - 1e-9 for a, b in zip(ys, ys[1:]))
    assert 0.0 <= min(ys) and max(ys) <= 10.0 + 1e-9


def test_convergence_is_one_panel_per_configuration(tmp_path):
    def attack(budget, mean, **settings):
        return {"attack": "sdar", "headline_metric": "ssim", "settings": {"budget": budget, **settings},
                "metrics": {"ssim": stat(mean, 0.05)}}

    entries = [entry("raw", "Raw", 1, 0.97, 0.98, [attack(1.0, 0.5), attack(4.0, 0.7), attack(1.0, 0.4, tie=1),
                                                   attack(4.0, 0.6, tie=1)]),
               entry("lightsplit-f", "LightSplit-F (CR 8×)", 8, 0.9, 0.8, [attack(1.0, 0.2)])]  # one budget: no panel
    assert [label for label, _ in convergence_series(entries, "sdar")] == ["MNIST: Raw", "MNIST: Raw [tie=1]"]
    two = mpimg.imread(convergence_plot(entries, attack="sdar", metric="ssim", path=tmp_path / "c.png"))
    assert two.shape[1] > two.shape[0]  # two panels side by side
