"""Issue 42's tables on a smoke grid (digits; raw, LightSplit-F and LightSplit-F+DP at CR 8; the victims,
direction scoring, model completion at 10 and 40 labelled samples, the linear probe and the reference
decoder): ``bench report`` writes the label-leakage, attack-free and rank-correlation tables with the expected
rows and columns, ``bench verify`` prints the agreement block, and ``bench site`` shows both on its pages."""
import json

import pytest

from bench.report.tables import TABLES, build_table
from bench.report.worst_case import image_attacks
from bench.site.schema import schema_problems
from tests.bench.cli.runner import run_cli
from tests.bench.report.smoke_grid import stored_smoke_grid

DEFENSES = [("raw", {}), ("lightsplit-f", {"cr": 8.0}), ("lightsplit-f+dp", {"cr": 8.0, "sigma": 0.02})]
ATTACKS = [("none", {}), ("label-direction", {}), ("model-completion", {"aux_labels": 10}),
           ("model-completion", {"aux_labels": 40}), ("linear-probe", {}), ("decoder-ref", {})]
NAMES = ("LABELS", "LEAKAGE", "LEAKAGE-RANK")
# One xdist group: the module's grid (about 5 CPU-s) is run on one worker, not on each.
pytestmark = pytest.mark.xdist_group("leakage-grid")
ROWS = [["digits", "Raw", "", ""], ["digits", "LightSplit-F", "8×", ""], ["digits", "LightSplit-F+DP", "8×", "0.02"]]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return stored_smoke_grid(tmp_path_factory.mktemp("leakage-grid"), DEFENSES, ATTACKS)


def rows_of(markdown: str) -> list[list[str]]:
    """The pipe table's rows, header first (the alignment line left out)."""
    lines = [line for line in markdown.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]


def test_bench_report_writes_the_three_tables(capsys, results, tmp_path):
    table = results.table()
    assert all(build_table(table, TABLES[name]).has_defended_rows for name in NAMES)  # so written by default too
    code, _, err = run_cli(capsys, ["report", "--results", str(results.root), "--table", ",".join(NAMES), "--out", str(tmp_path)])
    assert code == 0, err
    labels = rows_of((tmp_path / "table_LABELS.md").read_text())
    assert labels[0] == ["Dataset", "Defense", "CR", "σ", "direction scoring: label AUC ↓", "direction scoring: label acc. (%) ↓",
                         "model completion (aux_labels 10): label acc. (%) ↓", "model completion (aux_labels 40): label acc. (%) ↓"]
    assert [row[:4] for row in labels[1:]] == ROWS
    assert all(row[4].endswith("[0.500]") and row[5].endswith("]") for row in labels[1:])  # each beside its chance
    leakage = rows_of((tmp_path / "table_LEAKAGE.md").read_text())
    assert leakage[0][4:] == ["dCor ↓", "channel bits ↓", "class bits ↓", "dFIL ↓", "MSE bound (1/dFIL) ↑", "worst case: SSIM ↓"]
    assert [row[:4] for row in leakage[1:]] == ROWS
    raw, _, dp = leakage[1:]
    assert raw[5].startswith("—") and not dp[5].startswith("—")  # the channel bound needs the +dp noise
    assert all(not row[4].startswith("—") for row in leakage[1:])  # dCor for every defense
    rank = rows_of((tmp_path / "table_LEAKAGE-RANK.md").read_text())
    assert [(row[3], row[-1]) for row in rank[1:]] == [("dCor", "3"), ("channel bits", "1"), ("class bits", "1"), ("dFIL", "1"),
                                                        ("MSE bound (1/dFIL)", "1")]


def test_the_linear_probe_competes_for_the_worst_case(results):
    table = results.table()
    assert "linear-probe" in image_attacks(table)
    numbers = build_table(table, TABLES["LEAKAGE"]).numbers
    assert set(numbers.loc[numbers["attack"] == "worst-case", "via"]) <= {"linear-probe", "decoder-ref"}


def test_bench_verify_prints_whether_the_measures_agree(capsys, results):
    code, out, err = run_cli(capsys, ["verify", "--results", str(results.root)])
    assert code == 0, err
    block = out[out.index("do attack-free measures agree with the worst case?"):].splitlines()
    assert block[1].startswith("  digits mnistnet/split-2: dcor_input_payload: Spearman ρ ") and block[1].endswith("n = 3 configurations")
    assert "gaussian_channel_bits: no correlation, fewer than 3 defense configurations measure both (n = 1)" in block[2]
    assert out.splitlines()[-1].endswith("(smoke profile)")  # the counts stay last


def test_the_site_shows_label_leakage_and_the_measures(capsys, results, tmp_path):
    code, _, err = run_cli(capsys, ["site", "--results", str(results.root), "--out", str(tmp_path / "site")])
    assert code == 0, err
    entries = {e["defense"]["name"]: e for e in (json.loads(p.read_text()) for p in (tmp_path / "site" / "entries").glob("*.json"))}
    assert all(schema_problems(e) == [] for e in entries.values())
    dp = entries["lightsplit-f+dp"]
    assert dp["attack_free"]["dfil"]["mean"] > 0 and entries["raw"]["attack_free"]["dfil"]["mean"] is None
    assert [(i["attack"], i["settings"].get("aux_labels"), i["metric"]) for i in dp["label_leakage"]] == [
        ("label-direction", None, "label_auc_mean"), ("label-direction", None, "label_accuracy"),
        ("model-completion", 10.0, "label_accuracy"), ("model-completion", 40.0, "label_accuracy")]
    assert dp["label_leakage"][0]["chance"] == 0.5
    index = (tmp_path / "site" / "index.html").read_text()
    assert 'data-key="label"' in index and 'data-key="dcor"' in index
    page = (tmp_path / "site" / "entries" / f"{dp['entry_id']}.html").read_text()
    assert '<h2 id="labels">Label leakage</h2>' in page and '<h2 id="attack-free">Attack-free measures</h2>' in page
