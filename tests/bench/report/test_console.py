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
