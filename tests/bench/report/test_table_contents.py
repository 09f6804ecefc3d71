"""Content of Tables V, VIII, XIII, XIV, XV, XVI and XX against values worked out by hand.

Every expected cell below is a literal computed by hand from the per-seed values of the fixture:
mean over seeds, ± the Student-t 95% CI half-width ``t·s/√n`` with t(0.975, 2 dof) = 4.3027 for
three seeds and t(0.975, 1 dof) = 12.706 for two (so three values ``a−d, a, a+d`` give ``a ± 2.4841·d``
and two values ``a, b`` give ``± 6.3531·|a−b|``), and the change vs Raw computed per seed on the
matched Raw run (same cut, same seed), then averaged: ``(x − raw)/raw`` in %, shown as ``(+r%)``,
as the ratio ``(×(1 + r/100))`` or as ``r ± CI%`` as each column's spec says.
"""
from bench.report.convergence import MARKS, UNKNOWN
from bench.report.render import to_markdown
from bench.report.tables import TABLES, build_table
from tests.bench.report.handmade import runs, tidy

SIGMA = 0.02


def body(table, name):
    """The built table's column labels and its body rows (strings), each attack value without the mark of
    its convergence verdict (every attack here is stored at one budget: all unknown; test_tables tests marks)."""
    built = build_table(table, TABLES[name])
    unmarked = [[str(v).replace(MARKS[UNKNOWN], "") for v in row] for row in built.body.values.tolist()]
    return built, list(built.body.columns), unmarked


def test_table_v_sdar_ssim_under_dp_vs_raw_at_the_same_cut():
    table = tidy(
        runs("sdar", values={"ssim": (0.70, 0.80, 0.90)}),
        runs("sdar", "raw+dp", sigma=SIGMA, values={"ssim": (0.63, 0.72, 0.81)}),  # raw × 0.9
        runs("sdar", "lightsplit-f", cr=8.0, values={"ssim": (0.35, 0.48, 0.63)}),  # raw × 0.5, 0.6, 0.7
        runs("sdar", "lightsplit-f+dp", cr=8.0, sigma=SIGMA, values={"ssim": (0.28, 0.40, 0.54)}),  # × 0.4, 0.5, 0.6
        runs("sdar", "lightsplit-f", cr=16.0, values={"ssim": (0.1, 0.1, 0.1)}),  # not CR 8: left out
        runs("sdar", "topk", cr=8.0, values={"ssim": (0.1, 0.1, 0.1)}),  # not a DP row: left out
        runs("sdar", cut="split-4", values={"ssim": (0.60, 0.60, 0.60)}),
        runs("sdar", "lightsplit-f", cut="split-4", cr=8.0, values={"ssim": (0.30, 0.30, 0.30)}),
    )
    _, labels, rows = body(table, "V")
    assert labels == ["Cut", "Defense", "σ", "SDAR: SSIM ↓"]
    assert rows == [
        ["split-2", "Raw", "", "0.800 ± 0.248"],  # 2.4841 · 0.1
        ["split-2", "Raw+DP", "0.02", "0.720 ± 0.224 (−10.0%)"],  # 2.4841 · 0.09
        # mean 1.46/3 = 0.4867; s² = (0.1367² + 0.0067² + 0.1433²)/2 = 0.019633, ci = 4.3027·0.14012/√3 = 0.348
        ["split-2", "LightSplit-F", "", "0.487 ± 0.348 (−40.0%)"],
        # mean 1.22/3 = 0.4067; s² = (0.1267² + 0.0067² + 0.1333²)/2 = 0.016933, ci = 4.3027·0.13013/√3 = 0.323
        ["split-2", "LightSplit-F+DP", "0.02", "0.407 ± 0.323 (−50.0%)"],
        ["split-4", "Raw", "", "0.600 ± 0.000"],
        ["split-4", "LightSplit-F", "", "0.300 ± 0.000 (−50.0%)"],  # vs split-4's Raw 0.6, not split-2's
    ]


def test_table_viii_utility_per_setting_against_the_raw_of_the_same_setting():
    iid = {"clients": 5}
    skew = {"clients": 5, "partition": "dirichlet", "alpha": 0.5}
    pch_skew = {**skew, "heads": "pch"}
    acc = lambda *v: {"accuracy": v}  # noqa: E731
    table = tidy(
        runs("none", values=acc(0.60, 0.60, 0.60), setting=iid),
        runs("none", values=acc(0.50, 0.50, 0.50), setting=skew),
        runs("none", values=acc(0.40, 0.41, 0.42), setting=pch_skew),
        runs("none", "block-local", cr=8.0, tile=2, values=acc(0.58, 0.58, 0.58), setting=iid),
        runs("none", "block-local", cr=8.0, tile=2, values=acc(0.45, 0.45, 0.45), setting=skew),
        runs("none", "lightsplit-f", cr=8.0, values=acc(0.30, 0.31, 0.32), setting=pch_skew),
        runs("none", "topk", cr=8.0, values=acc(0.1, 0.1, 0.1), setting=iid),  # not a Table VIII row
        runs("none", values=acc(0.9, 0.9, 0.9)),  # one client: not a Table VIII row
        runs("none", values=acc(0.70, 0.70, 0.70), setting={"clients": 2000}),  # no upper bound on clients
        runs("none", "block-local", cr=8.0, tile=2, values=acc(0.69, 0.69, 0.69), setting={"clients": 2000}),
    )
    _, labels, rows = body(table, "VIII")
    assert labels == ["Dataset", "Clients", "Heads", "Partition", "Defense", "b", "CR", "Acc. (%)"]
    assert rows == [
        ["MNIST", "5", "PCH", "dirichlet", "Raw", "", "", "41.0 ± 2.5"],  # 2.4841 · 1 point
        ["MNIST", "5", "PCH", "dirichlet", "LightSplit-F", "", "8×", "−10.0 ± 0.0"],  # paired per seed
        ["MNIST", "5", "SCH", "dirichlet", "Raw", "", "", "50.0 ± 0.0"],
        ["MNIST", "5", "SCH", "dirichlet", "Block-local", "2", "8×", "−5.0 ± 0.0"],  # vs 0.50, not 0.60
        ["MNIST", "5", "SCH", "iid", "Raw", "", "", "60.0 ± 0.0"],
        ["MNIST", "5", "SCH", "iid", "Block-local", "2", "8×", "−2.0 ± 0.0"],
        ["MNIST", "2000", "SCH", "iid", "Raw", "", "", "70.0 ± 0.0"],
        ["MNIST", "2000", "SCH", "iid", "Block-local", "2", "8×", "−1.0 ± 0.0"],
    ]


def test_table_xiii_fora_and_reference_decoder_with_ratios():
    lpips_note = "LPIPS unavailable (hand-made)"
    fora = lambda defense, ssim, **kw: runs("fora", defense, values={"lpips": (None,) * 3, "ssim": ssim},  # noqa: E731
                                            notes={"lpips": lpips_note}, **kw)
    table = tidy(
        fora("raw", (0.60, 0.65, 0.70)),
        fora("topk", (0.50, 0.55, 0.60), cr=16.0),
        fora("lightsplit-f", (0.40, 0.45, 0.50), cr=8.0),
        fora("lightsplit-f", (0.30, 0.30, 0.30), cr=8.0, lambda_wcc=0.1),
        runs("decoder-ref", values={"lpips": (0.10, 0.20, 0.30), "ssim": (0.90, 0.92, 0.94),
                                    "mse": (0.010, 0.020, 0.030)}),
        # lpips raw × 1.1, ssim raw × 0.95, mse raw × 0.5
        runs("decoder-ref", "topk", cr=16.0, values={"lpips": (0.11, 0.22, 0.33), "ssim": (0.855, 0.874, 0.893),
                                                     "mse": (0.005, 0.010, 0.015)}),
        # lpips raw × 1.2, 1.5, 1.8 (mean +50%); ssim raw × 0.9; mse raw × 1.5, 2, 2.5 (mean +100%)
        runs("decoder-ref", "lightsplit-f", cr=8.0, values={"lpips": (0.12, 0.30, 0.54), "ssim": (0.810, 0.828, 0.846),
                                                            "mse": (0.015, 0.040, 0.075)}),
        # lpips raw × 2, ssim raw × 0.8, mse raw × 3
        runs("decoder-ref", "lightsplit-f", cr=8.0, lambda_wcc=0.1,
             values={"lpips": (0.20, 0.40, 0.60), "ssim": (0.720, 0.736, 0.752), "mse": (0.030, 0.060, 0.090)}),
    )
    built, labels, rows = body(table, "XIII")
    assert labels == ["Dataset", "Defense", "CR", "λ_WCC", "FORA: LPIPS ↑", "FORA: SSIM ↓",
                      "FORA ref. decoder: LPIPS ↑", "FORA ref. decoder: SSIM ↓", "FORA ref. decoder: MSE ↑"]
    assert rows == [
        ["MNIST", "Raw", "", "0", "—¹", "0.650 ± 0.124", "0.200 ± 0.248", "0.920 ± 0.050", "0.0200 ± 0.0248"],
        # 0.22 ± 2.4841·0.11; 0.874 ± 2.4841·0.019; 0.0100 ± 2.4841·0.005
        ["MNIST", "top-K", "16×", "0", "—¹", "0.550 ± 0.124", "0.220 ± 0.273 (×1.10)", "0.874 ± 0.047 (−5.0%)",
         "0.0100 ± 0.0124 (×0.50)"],
        # lpips 0.96/3 = 0.32, s² = (0.2² + 0.02² + 0.22²)/2 = 0.0444, ci = 4.3027·0.21071/√3 = 0.523;
        # mse 0.13/3 = 0.0433, s² = (0.0283² + 0.0033² + 0.0317²)/2 = 0.0009083, ci = 4.3027·0.030139/√3 = 0.0749
        ["MNIST", "LightSplit-F", "8×", "0", "—¹", "0.450 ± 0.124", "0.320 ± 0.523 (×1.50)", "0.828 ± 0.045 (−10.0%)",
         "0.0433 ± 0.0749 (×2.00)"],
        ["MNIST", "LightSplit-F", "8×", "0.1", "—¹", "0.300 ± 0.000", "0.400 ± 0.497 (×2.00)", "0.736 ± 0.040 (−20.0%)",
         "0.0600 ± 0.0745 (×3.00)"],
    ]
    assert built.footnotes == [lpips_note]


def test_table_xiv_unsplit_metrics_with_a_diverged_run_left_out():
    raw = {"foreground_ratio": (0.18, 0.20, 0.22), "masked_mse": (0.40, 0.50, 0.60), "mse": (0.040, 0.050, 0.060),
           "masked_psnr": (4.0, 5.0, 6.0), "psnr": (13.0, 14.0, 15.0), "box_ssim": (0.30, 0.35, 0.40),
           "ssim": (0.50, 0.55, 0.60)}
    # Seed 2 diverged: its values (9.9) must not count anywhere. masked MSE raw × 1.1, 1.3; MSE raw × 1.2.
    defended = {"foreground_ratio": (0.19, 0.21, 9.9), "masked_mse": (0.44, 0.65, 9.9), "mse": (0.048, 0.060, 9.9),
                "masked_psnr": (3.5, 4.5, 9.9), "psnr": (12.0, 13.0, 9.9), "box_ssim": (0.25, 0.27, 9.9),
                "ssim": (0.40, 0.44, 9.9)}
    table = tidy(runs("unsplit", values=raw, diverged_seed=-1),
                 runs("unsplit", "lightsplit-f", cr=8.0, values=defended, diverged_seed=2))
    built, labels, rows = body(table, "XIV")
    assert labels == ["Dataset", "Cut", "Defense", "CR", "λ_WCC", "UnSplit: fg. ratio", "UnSplit: masked MSE ↑",
                      "UnSplit: MSE ↑", "UnSplit: masked PSNR ↓", "UnSplit: PSNR ↓", "UnSplit: box SSIM ↓",
                      "UnSplit: SSIM ↓"]
    assert rows == [
        ["MNIST", "split-2", "Raw", "", "0", "0.200 ± 0.050", "0.5000 ± 0.2484", "0.0500 ± 0.0248", "5.00 ± 2.48",
         "14.00 ± 2.48", "0.350 ± 0.124", "0.550 ± 0.124"],
        # two runs: ± 6.3531·|a−b|; masked MSE (+10% +30%)/2 = +20%, MSE +20%
        ["MNIST", "split-2", "LightSplit-F", "8×", "0", "0.200 ± 0.127¹", "0.5450 ± 1.3342 (+20.0%)¹",
         "0.0540 ± 0.0762 (+20.0%)¹", "4.00 ± 6.35¹", "12.50 ± 6.35¹", "0.260 ± 0.127¹", "0.420 ± 0.254¹"],
    ]
    assert built.footnotes == ["1 of 3 runs diverged (left out)"]


def test_table_xv_fsha_at_cr_8_with_ratios_to_raw():
    table = tidy(
        runs("fsha", values={"accuracy": (0.95, 0.96, 0.97), "lpips": (0.20, 0.25, 0.30), "mse": (0.04, 0.05, 0.06),
                             "ssim": (0.5, 0.6, 0.7)}),
        # lpips raw × 1.5, mse raw × 2
        runs("fsha", "raw+dp", sigma=SIGMA, values={"accuracy": (0.90, 0.91, 0.92), "lpips": (0.30, 0.375, 0.45),
                                                     "mse": (0.08, 0.10, 0.12), "ssim": (0.40, 0.45, 0.50)}),
        # lpips raw × 1.1, 1.2, 1.3 (+20%); mse raw × 1, 1.5, 2 (+50%)
        runs("fsha", "lightsplit-f", cr=8.0, values={"accuracy": (0.85, 0.88, 0.91), "lpips": (0.22, 0.30, 0.39),
                                                     "mse": (0.04, 0.075, 0.12), "ssim": (0.30, 0.36, 0.42)}),
        runs("fsha", "lightsplit-f", cr=16.0, values={"accuracy": (0.1,) * 3, "lpips": (0.1,) * 3, "mse": (0.1,) * 3,
                                                      "ssim": (0.1,) * 3}),  # not CR 8: left out
    )
    _, labels, rows = body(table, "XV")
    assert labels == ["Dataset", "Defense", "σ", "FSHA: Acc. (%)", "FSHA: LPIPS ↑", "FSHA: MSE ↑", "FSHA: SSIM ↓"]
    assert rows == [
        ["MNIST", "Raw", "", "96.0 ± 2.5", "0.250 ± 0.124", "0.0500 ± 0.0248", "0.600 ± 0.248"],
        ["MNIST", "Raw+DP", "0.02", "91.0 ± 2.5", "0.375 ± 0.186 (×1.50)", "0.1000 ± 0.0497 (×2.00)", "0.450 ± 0.124"],
        # lpips 0.91/3 = 0.3033, s² = (0.0833² + 0.0033² + 0.0867²)/2 = 0.0072333, ci = 4.3027·0.085049/√3 = 0.211;
        # mse 0.235/3 = 0.0783, s² = (0.0383² + 0.0033² + 0.0417²)/2 = 0.0016083, ci = 4.3027·0.040104/√3 = 0.0996
        ["MNIST", "LightSplit-F", "", "88.0 ± 7.5", "0.303 ± 0.211 (×1.20)", "0.0783 ± 0.0996 (×1.50)",
         "0.360 ± 0.149"],
    ]


def test_table_xvi_projection_aware_decoders_and_a_missing_cell():
    table = tidy(
        runs("decoder-z", values={"ssim": (0.90, 0.92, 0.94)}),
        runs("decoder-z-lift", values={"ssim": (0.91, 0.92, 0.93)}),
        runs("decoder-z-grad", values={"ssim": (0.88, 0.90, 0.92)}),  # no decoder-fused cell on Raw
        runs("decoder-z", "lightsplit-f", cr=8.0, values={"ssim": (0.80, 0.85, 0.90)}),
        runs("decoder-z-lift", "lightsplit-f", cr=8.0, values={"ssim": (0.82, 0.84, 0.86)}),
        runs("decoder-z-grad", "lightsplit-f", cr=8.0, values={"ssim": (0.81, 0.82, 0.83)}),
        runs("decoder-fused", "lightsplit-f", cr=8.0, values={"ssim": (0.86, 0.87, 0.88)}),
    )
    built, labels, rows = body(table, "XVI")
    assert labels == ["Dataset", "Cut", "Defense", "CR", "decoder z: SSIM ↓", "decoder z+zRᵀ: SSIM ↓",
                      "decoder z+g: SSIM ↓", "decoder fused: SSIM ↓"]
    assert rows == [
        ["MNIST", "split-2", "Raw", "", "0.920 ± 0.050", "0.920 ± 0.025", "0.900 ± 0.050", "—¹"],
        ["MNIST", "split-2", "LightSplit-F", "8×", "0.850 ± 0.124", "0.840 ± 0.050", "0.820 ± 0.025", "0.870 ± 0.025"],
    ]
    assert built.footnotes == ["no stored cell"]


def test_table_xx_relative_changes_and_the_attacks_it_lacks():
    raw = {"sdar": {"mse": (0.02, 0.03, 0.04), "ssim": (0.6, 0.7, 0.8)},
           "unsplit": {"mse": (0.05, 0.06, 0.07), "ssim": (0.30, 0.40, 0.50)}}
    # λ 0: SDAR MSE raw × 1.1, 1.2, 1.3 and SSIM × 0.9, 0.8, 0.7; UnSplit MSE × 1.5, SSIM × 0.95
    wcc0 = {"sdar": {"mse": (0.022, 0.036, 0.052), "ssim": (0.54, 0.56, 0.56)},
            "unsplit": {"mse": (0.075, 0.090, 0.105), "ssim": (0.285, 0.380, 0.475)}}
    # λ 1e-3: SDAR MSE × 2 and SSIM × 0.5; UnSplit MSE × 1.2, 1.4, 1.6 and SSIM × 0.6, 0.7, 0.8
    wcc3 = {"sdar": {"mse": (0.04, 0.06, 0.08), "ssim": (0.30, 0.35, 0.40)},
            "unsplit": {"mse": (0.060, 0.084, 0.112), "ssim": (0.18, 0.28, 0.40)}}
    table = tidy(*(runs(a, values=raw[a]) for a in raw),
                 *(runs(a, "lightsplit-f", cr=8.0, values=wcc0[a]) for a in wcc0),
                 *(runs(a, "lightsplit-f", cr=8.0, lambda_wcc=1e-3, values=wcc3[a]) for a in wcc3))
    built, labels, rows = body(table, "XX")
    assert labels == ["Dataset", "Cut", "Protocol", "Defense", "CR", "λ_WCC", "SDAR: MSE ↑", "SDAR: SSIM ↓",
                      "UnSplit: MSE ↑", "UnSplit: SSIM ↓"]
    # Relative changes are the raw sign (this spec does not flip them toward privacy);
    # (10, 20, 30)% → +20.0 ± 2.4841·10; (20, 40, 60)% → +40.0 ± 2.4841·20.
    assert rows == [
        ["MNIST", "split-2", "USL", "Raw", "", "0", "0.0300 ± 0.0248", "0.700 ± 0.248", "0.0600 ± 0.0248",
         "0.400 ± 0.248"],
        ["MNIST", "split-2", "USL", "LightSplit-F", "8×", "0", "+20.0 ± 24.8%", "−20.0 ± 24.8%", "+50.0 ± 0.0%",
         "−5.0 ± 0.0%"],
        ["MNIST", "split-2", "USL", "LightSplit-F", "8×", "0.001", "+100.0 ± 0.0%", "−50.0 ± 0.0%", "+40.0 ± 49.7%",
         "−30.0 ± 24.8%"],
    ]
    assert built.missing == ["FORA (no stored cell with attack 'fora')",
                             "FORA ref. decoder (no stored cell with attack 'decoder-ref')",
                             "aux. decoder (no stored cell with attack 'decoder')"]
    assert "Not in the results: FORA (no stored cell" in to_markdown(built)
