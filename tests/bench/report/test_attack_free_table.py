"""Table LEAKAGE from a tidy table made by hand: the victims' attack-free measures (mean ± CI over seeds,
absolute) beside the worst-case SSIM, an absent measure as "—" with its stored reason, and no table at all
where no measure is stored (results made before the measures existed)."""
from bench.leakage.names import CHANNEL_BITS, DCOR, DFIL, DFIL_MSE_BOUND, MEASURES
from bench.report.render import to_markdown
from bench.report.tables import TABLES, build_table
from tests.bench.report.handmade import runs, tidy

NO_NOISE = "no Gaussian noise of a fixed scale on the payload (the bound needs the +dp transform)"
UNMEASURED = {m: (None, None, None) for m in MEASURES if m != DCOR}


def grid(with_measures: bool = True):
    raw = {DCOR: (0.89, 0.90, 0.91), **UNMEASURED} if with_measures else {}
    dp = {DCOR: (0.60, 0.60, 0.60), CHANNEL_BITS: (10.0, 12.0, 14.0), "gaussian_channel_class_bits": (5.0, 5.0, 5.0),
          DFIL: (4.0, 4.0, 4.0), DFIL_MSE_BOUND: (0.25, 0.25, 0.25)} if with_measures else {}
    return tidy(
        runs("none", values={"accuracy": (0.9, 0.9, 0.9), **raw}, notes={m: NO_NOISE for m in UNMEASURED}),
        runs("none", "raw+dp", sigma=0.5, values={"accuracy": (0.8, 0.8, 0.8), **dp}),
        runs("decoder-ref", values={"ssim": (0.90, 0.90, 0.90)}),
        runs("linear-probe", values={"ssim": (0.95, 0.95, 0.95)}),  # the worst case on raw
        runs("decoder-ref", "raw+dp", sigma=0.5, values={"ssim": (0.40, 0.40, 0.40)}),
    )


def test_the_measures_stand_beside_the_worst_case():
    built = build_table(grid(), TABLES["LEAKAGE"])
    assert list(built.body.columns) == ["Dataset", "Defense", "σ", "dCor ↓", "channel bits ↓", "class bits ↓", "dFIL ↓",
                                        "MSE bound (1/dFIL) ↑", "worst case: SSIM ↓"]
    rows = built.body.values.tolist()
    assert rows[0] == ["MNIST", "Raw", "", "0.900 ± 0.025", "—¹", "—¹", "—¹", "—¹", "0.950 ± 0.000 (linear probe)"]
    assert rows[1] == ["MNIST", "Raw+DP", "0.5", "0.600 ± 0.000", "12.0 ± 5.0", "5.0 ± 0.0", "4 ± 0",  # 4 significant digits
                       "0.25 ± 0", "0.400 ± 0.000 (FORA ref. decoder)"]
    assert built.footnotes == [NO_NOISE]
    text = to_markdown(built)
    assert all(meaning in text for meaning in MEASURES.values()) and "Table LEAKAGE-RANK" in text


def test_results_without_any_measure_give_no_table():
    built = build_table(grid(with_measures=False), TABLES["LEAKAGE"])
    assert built.body.empty and not built.has_defended_rows
    assert built.missing == [f"the attack-free measures ({', '.join(MEASURES)}: none stored)"]
