import io
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from bench.report.render import latex_escape, to_csv, to_latex, to_markdown
from bench.report.tables import TABLES, build_table
from bench.run.store import records_to_table
from tests.bench.report import synthetic

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("name", ["II", "III"])
@pytest.mark.parametrize("fmt", ["md", "tex"])
def test_tables_equal_their_golden_files(tidy, name, fmt):
    built = build_table(tidy, TABLES[name])
    text = to_markdown(built) if fmt == "md" else to_latex(built)
    assert text == (GOLDEN / f"table_{name}.{fmt}").read_text()


def test_missing_lpips_is_a_dash_with_its_reason(tidy):
    text = to_markdown(build_table(tidy, TABLES["III"]))
    assert "| —¹ |" in text and f"¹ {synthetic.LPIPS_NOTE}" in text
    assert "no stored cell with attack 'sdar'" in text  # a column the results lack is named


def test_a_cell_absent_from_the_results_is_a_dash_with_a_footnote():
    records = [r for r in synthetic.records() if not (r.cell.attack == "decoder-ref" and r.cell.knob("cr") == 16.0)]
    built = build_table(records_to_table(records), TABLES["II"])
    row = built.body[built.body["CR"] == "16×"].iloc[0]
    marked = row["FORA ref. decoder: SSIM ↓"]
    assert marked.startswith("—")
    assert built.footnotes[int(marked[1:].translate(str.maketrans("¹²³⁴", "1234"))) - 1] == "no stored cell"


def test_all_runs_diverged_is_a_dash_with_a_footnote():
    records = synthetic.records()
    for r in records:
        if r.cell.attack == "unsplit" and r.cell.knob("cr") == 16.0:
            r.metrics["diverged"] = 1.0
    built = build_table(records_to_table(records), TABLES["II"])
    row = built.body[built.body["CR"] == "16×"].iloc[0]
    assert row["UnSplit: masked MSE (min-max) ↑"].startswith("—") and "all 3 runs diverged" in built.footnotes


def test_csv_holds_the_numbers(tidy):
    from io import StringIO

    numbers = pd.read_csv(StringIO(to_csv(build_table(tidy, TABLES["II"]))))
    assert {"mean", "ci", "n", "n_diverged", "delta", "delta_ci", "rel", "rel_ci"} <= set(numbers.columns)
    hit = numbers[(numbers["attack"] == "unsplit") & (numbers["cr"] == 16.0) & (numbers["metric"] == "masked_mse_minmax")]
    assert hit["n"].item() == 2 and hit["n_diverged"].item() == 1 and hit["mean"].item() == pytest.approx(0.31)
    worst = numbers[(numbers["attack"] == "worst-case") & (numbers["cr"] == 16.0)]
    assert worst["via"].item() == "decoder-ref" and worst["mean"].item() == pytest.approx(0.42)


def test_a_table_without_data_says_so(tidy):
    built = build_table(tidy, TABLES["XV"])
    assert built.body.empty and not built.has_defended_rows
    assert "No stored cell" in to_markdown(built) and "attack 'fsha'" in to_markdown(built)
    assert build_table(tidy, TABLES["II"]).has_defended_rows


def test_mixed_profiles_are_refused(tidy):
    mixed = pd.concat([tidy, synthetic.table(profile="cpu")], ignore_index=True)
    with pytest.raises(ValueError, match="mix profiles"):
        build_table(mixed, TABLES["II"])
    assert "Profile 'cpu'" in build_table(mixed, TABLES["II"], profile="cpu").caption


def test_latex_escape():
    assert latex_escape("a_b & 50% #1 {x} ~ ^") == r"a\_b \& 50\% \#1 \{x\} \textasciitilde{} \textasciicircum{}"
    assert latex_escape("λ_WCC −1 ± 2 × —¹²") == r"$\lambda_{\mathrm{WCC}}$ $-$1 $\pm$ 2 $\times$ ---\textsuperscript{12}"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("name", ["II", "III"])
def test_latex_compiles_standalone(tidy, tmp_path, name):
    (tmp_path / "t.tex").write_text(to_latex(build_table(tidy, TABLES[name]), standalone=True))
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 0


def test_standalone_wraps_a_minimal_document(tidy):
    text = to_latex(build_table(tidy, TABLES["II"]), standalone=True)
    assert text.startswith("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n")
    assert text.rstrip().endswith("\\end{document}")
    assert all(rule in text for rule in (r"\toprule", r"\midrule", r"\bottomrule"))


def with_four_times_the_budget() -> pd.DataFrame:
    """The synthetic table plus decoder-ref at ×4 on every seed: Raw gains +0.05, +0.01 and falls 0.09
    (unstable, though its mean gain is −0.01), LS-F CR 8 gains +0.05 on seed 0 (not converged), LS-F CR 16
    moves at most 0.01 (converged). UnSplit is stored at ×1 alone (unknown)."""
    import dataclasses

    from bench.run.store import OK, CellRecord

    larger = {"raw": (0.95, 0.93, 0.85), "ls8": (0.65, 0.63, 0.58), "ls16": (0.41, 0.44, 0.43)}
    records = synthetic.records()
    for key, values in larger.items():
        for seed, ssim in zip(synthetic.SEEDS, values):
            cell = dataclasses.replace(synthetic.cell(key, seed, "decoder-ref"), attack_knobs={"budget": 4.0})
            records.append(CellRecord(cell, OK, metrics={"accuracy": synthetic.ACCURACY[key][seed], "ssim": ssim}))
    return records_to_table(records)


def test_each_attack_cell_carries_the_mark_of_its_seed_by_seed_verdict():
    built = build_table(with_four_times_the_budget(), TABLES["II"])
    rows = built.body.set_index("CR")
    decoder, unsplit = "FORA ref. decoder: SSIM ↓", "UnSplit: masked MSE (min-max) ↑"
    assert rows.loc["", decoder].endswith("‡") and rows.loc["8×", decoder].endswith("†")
    assert not any(mark in rows.loc["16×", decoder] for mark in "†‡°")  # converged: unmarked
    assert all("°" in text for text in rows[unsplit])
    assert not any(mark in text for text in rows["Acc. (%)"] for mark in "†‡°")  # the victims' column: no verdict
    legend = next(n for n in built.notes if n.startswith("Convergence"))
    assert all(mark in legend for mark in "†‡°") and "unmarked: converged" in legend
    numbers = pd.read_csv(io.StringIO(to_csv(built)))
    verdicts = numbers[(numbers["attack"] == "decoder-ref") & (numbers["metric"] == "ssim")]["convergence"]
    assert verdicts.tolist() == ["unstable", "not converged", "converged"]
    assert set(numbers.loc[numbers["attack"] == "unsplit", "convergence"]) == {"unknown"}
    assert numbers.loc[numbers["attack"] == "none", "convergence"].isna().all()
    latex = to_latex(built)
    assert r"\textsuperscript{\ddag}" in latex and r"\textsuperscript{\dag}" in latex
    assert r"\textsuperscript{$\circ$}" in latex and "†" not in latex


def test_at_four_times_the_budget_the_highest_stored_is_unknown():
    built = build_table(with_four_times_the_budget(), TABLES["II"], attack_budget=4.0)
    numbers = pd.read_csv(io.StringIO(to_csv(built)))
    assert set(numbers.loc[numbers["attack"] == "decoder-ref", "convergence"]) == {"unknown"}
