"""The table ``bench run`` prints: UnSplit's min-max (as released) score beside its plain one."""
from bench.report.console import print_utility_table, utility_summary
from tests.bench.report.handmade import runs, tidy


def unsplit_runs():
    return runs("unsplit", values={"accuracy": (0.96, 0.97, 0.98), "masked_mse": (0.40, 0.44, 0.48),
                                   "masked_mse_minmax": (0.10, 0.11, 0.12)})


def test_summary_keeps_the_minmax_score_beside_the_plain_one():
    records = unsplit_runs()
    summary = utility_summary(tidy(records), [r.cell for r in records])
    row = summary.iloc[0]
    assert len(summary) == 1 and row["seeds"] == 3
    assert (round(row["masked_mse"], 6), round(row["masked_mse_minmax"], 6)) == (0.44, 0.11)


def test_printed_table_has_both_columns(capsys):
    records = unsplit_runs()
    print_utility_table(tidy(records), [r.cell for r in records])
    out = capsys.readouterr().out
    assert "masked MSE (min-max)" in out and "0.1100" in out and "0.4400" in out


def test_no_number_is_cut_short_in_the_demos_table(capsys):
    """The demo's fifteen columns at 150 characters: every value shows in full (Δacc was once "-0.03…")."""
    victim = {"accuracy": (0.932,) * 3, "accuracy_delta_vs_raw": (-0.034,) * 3, "bytes_up_per_sample": (4608.0,) * 3,
              "bytes_down_per_sample": (4608.0,) * 3, "realized_cr": (1.0,) * 3, "lpips": (0.256,) * 3}
    records = [record for attack in ("decoder-ref", "prior", "unsplit") for record in runs(
        attack, "lightsplit-f", cr=8.0, values={**victim, "ssim": (0.877,) * 3, "masked_mse": (0.3729,) * 3,
                                                "masked_mse_minmax": (0.1695,) * 3})]
    print_utility_table(tidy(records), [r.cell for r in records])
    out = capsys.readouterr().out
    assert "…" not in "".join(line for line in out.splitlines() if line.startswith("│"))  # body rows only
    for value in ("-0.0340", "4,608", "0.3729", "0.1695", "lightsplit-f", "decoder-ref"):
        assert value in out, value
