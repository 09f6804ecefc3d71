from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest

from bench.report import figures


def assert_written(paths: list[Path], stems: set[str], suffixes: frozenset = frozenset({".png", ".pdf"})) -> None:
    assert {p.stem for p in paths} == stems
    assert {p.suffix for p in paths} == suffixes
    assert all(p.stat().st_size > 0 for p in paths)


@pytest.fixture(scope="module")
def results(tmp_path_factory, tidy):
    """A results folder with tiny reconstruction grids (truth row above, reconstruction below)."""
    root = tmp_path_factory.mktemp("results")
    (root / "grids").mkdir()
    rng = np.random.default_rng(0)
    for cell_id in tidy.loc[(tidy["attack"] != "none") & (tidy["seed"] > 0), "cell_id"].unique():
        mpimg.imsave(root / "grids" / f"{cell_id}.png", rng.random((20, 38)), cmap="gray")
    return root


@pytest.mark.parametrize("delta", [True, False])
def test_fig4(tidy, tmp_path, delta):
    assert_written(figures.fig4_utility(tidy, tmp_path, delta=delta), {"fig4_utility"})


def test_the_same_results_give_byte_identical_files(tidy, tmp_path):
    first = figures.fig4_utility(tidy, tmp_path / "a", delta=True)
    second = figures.fig4_utility(tidy, tmp_path / "b", delta=True)
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]


def test_fig5(tidy, tmp_path):
    assert_written(figures.fig5_privacy_deltas(tidy, tmp_path), {"fig5_decoder-ref", "fig5_unsplit"})


def test_fig5_leaves_out_defenses_without_a_cr(tidy, tmp_path):
    """Raw+DP has no CR, so no point on Fig. 5's CR axis; it must not break the figure."""
    import pandas as pd

    dp = tidy[(tidy["defense"] == "lightsplit-f") & (tidy["attack"] == "unsplit")].copy()
    dp = dp.assign(defense="raw+dp", cr=float("nan"), sigma=0.02, cell_id=dp["cell_id"] + "-dp")
    with_dp = pd.concat([tidy, dp], ignore_index=True)
    assert_written(figures.fig5_privacy_deltas(with_dp, tmp_path), {"fig5_decoder-ref", "fig5_unsplit"})


def test_fig6(tidy, tmp_path, results):
    # pictures of images: PNG only
    assert_written(figures.fig6_grids(tidy, results, tmp_path), {"fig6_decoder-ref", "fig6_unsplit"}, frozenset({".png"}))


def test_fig15a(tidy, tmp_path):
    assert_written(figures.fig15a_cr_sweep(tidy, tmp_path, attack="unsplit"), {"fig15a_cr_sweep"})


def test_pareto(tidy, tmp_path):
    assert_written(figures.pareto_figure(tidy, tmp_path), {"pareto"})


def test_absent_data_skips_with_a_message(tidy, tmp_path):
    messages: list[str] = []
    utility_only = tidy[tidy["attack"] == "none"]
    assert figures.fig6_grids(tidy, tmp_path / "nothing", tmp_path, on_skip=messages.append) == []
    assert figures.fig5_privacy_deltas(utility_only, tmp_path, on_skip=messages.append) == []
    assert figures.fig4_utility(tidy[tidy["defense"] == "raw"], tmp_path, on_skip=messages.append) == []
    assert len(messages) == 3 and all(m.startswith("fig ") for m in messages)
    assert not list(tmp_path.iterdir())


def test_the_default_attack_is_the_one_that_leaks_most_on_raw():
    import pandas as pd

    from bench.report.figures import pick_attack

    rows = []
    for attack, ssim, mse in (("weak", 0.3, 0.09), ("strong", 0.8, 0.02)):
        for defense, shift in (("raw", 0.0), ("lightsplit-f", -0.2)):
            for metric, value in (("ssim", ssim + shift), ("mse", mse - shift / 10)):
                rows.append({"cell_id": f"{attack}-{defense}", "attack": attack, "defense": defense, "metric": metric,
                             "value": value, "status": "ok", "seed": 0, "profile": "smoke", "note": None})
    table = pd.DataFrame(rows)
    assert pick_attack(table, "ssim") == "strong"  # higher SSIM leaks more
    assert pick_attack(table, "mse") == "strong"  # lower MSE leaks more
    assert pick_attack(table, "ssim", "weak") == "weak"  # an explicit choice stands
    assert pick_attack(table, "lpips") is None


def test_fig6_draws_a_one_channel_grid_in_grey(tidy, tmp_path):
    """Grey grids are stored in one channel; the figure must not paint them in a colour map."""
    from PIL import Image

    root = tmp_path / "grey"
    (root / "grids").mkdir(parents=True)
    for cell_id in tidy["cell_id"].unique():
        Image.fromarray((np.random.default_rng(0).random((20, 38)) * 255).astype(np.uint8)).save(root / "grids" / f"{cell_id}.png")
    drawn = np.asarray(Image.open(figures.fig6_grids(tidy, root, tmp_path / "out", attacks=["decoder-ref"])[0]).convert("RGB")).astype(int)
    assert (drawn[..., 0] == drawn[..., 1]).all() and (drawn[..., 1] == drawn[..., 2]).all()
