"""The DEMO table (``make demo``'s summary), built from a tidy table made by hand: bytes and Δ accuracy,
the worst case over image attacks, UnSplit's plain and min-max scores, and the prior's floor row."""
from bench.report.render import to_markdown
from bench.report.table_specs import DEMO, EXTRA_TABLES, TABLES
from bench.report.tables import build_table
from tests.bench.report.handmade import runs, tidy


def same(value: float) -> tuple[float, float, float]:
    return value, value, value


def demo_table():
    """Raw and LightSplit-F at CR 8: under LightSplit-F UnSplit leaks more SSIM than the reference decoder;
    the prior's masked_mse_minmax (0.9) must never be the floor of the min-max column."""
    return tidy(
        runs("none", values={"accuracy": (0.96, 0.97, 0.98), "bytes_up_per_sample": same(4608.0)}),
        runs("none", "lightsplit-f", cr=8.0, values={"accuracy": (0.92, 0.93, 0.94), "bytes_up_per_sample": same(576.0)}),
        runs("decoder-ref", values={"ssim": same(0.95)}),
        runs("decoder-ref", "lightsplit-f", cr=8.0, values={"ssim": same(0.20)}),
        runs("unsplit", values={"ssim": same(0.30), "masked_mse": same(0.44), "masked_mse_minmax": same(0.10)}),
        runs("unsplit", "lightsplit-f", cr=8.0,
             values={"ssim": same(0.35), "masked_mse": same(0.47), "masked_mse_minmax": same(0.14)}),
        runs("prior", values={"ssim": same(0.12), "masked_mse": same(0.25), "masked_mse_minmax": same(0.9)}),
    )


def test_demo_table_shows_bytes_accuracy_worst_case_unsplit_both_ways_and_the_floor():
    built = build_table(demo_table(), DEMO)
    assert list(built.body.columns) == ["Dataset", "Defense", "CR", "Acc. (%)", "bytes up / sample", "worst case: SSIM ↓",
                                        "UnSplit: masked MSE ↑", "UnSplit: masked MSE (min-max) ↑"]
    rows = {r["Defense"]: r for r in built.body.to_dict("records")}
    assert list(rows) == ["Raw", "LightSplit-F", "floor (prior)"]
    assert rows["Raw"]["Acc. (%)"] == "97.0 ± 2.5" and rows["LightSplit-F"]["Acc. (%)"] == "−4.0 ± 0.0"  # Δ in points
    assert rows["Raw"]["bytes up / sample"] == "4608 ± 0" and rows["LightSplit-F"]["bytes up / sample"] == "576 ± 0"
    assert rows["Raw"]["worst case: SSIM ↓"] == "0.950 ± 0.000 (FORA ref. decoder)"
    assert rows["LightSplit-F"]["worst case: SSIM ↓"] == "0.350 ± 0.000 (UnSplit)"  # not the decoder's 0.20
    assert rows["Raw"]["UnSplit: masked MSE ↑"].startswith("0.4400 ± 0.0000")
    assert rows["LightSplit-F"]["UnSplit: masked MSE (min-max) ↑"].startswith("0.1400 ± 0.0000")
    floor = rows["floor (prior)"]
    assert floor["worst case: SSIM ↓"] == "0.120 ± 0.000" and floor["Acc. (%)"] == floor["bytes up / sample"] == ""
    assert floor["UnSplit: masked MSE ↑"] == floor["UnSplit: masked MSE (min-max) ↑"] == "0.2500 ± 0.0000"
    assert to_markdown(built).startswith("**Table DEMO: make demo at a glance.")


def test_demo_table_is_built_on_request_only():
    assert "DEMO" not in TABLES and EXTRA_TABLES == {"DEMO": DEMO}
    assert "attacks at ×0.25" in build_table(demo_table(), DEMO, attack_budget=0.25).caption
