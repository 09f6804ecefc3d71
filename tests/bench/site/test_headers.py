"""Issue 40, item 4: headers carry the declared direction, accuracy its Δ vs raw, DP rows their ε and δ
with the accountant, defenses and attacks their papers and venues, the paper's number stands beside
the measured one, and docstrings render as Markdown."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import bench.report.labels as labels
from bench.report.paper_claims import Claim, Selector
from bench.site.catalog import attack_info, defense_info
from bench.site.cells import dp_cell, paper_text
from bench.site.entry_page import paper_rows
from bench.site.markup import paragraphs
from bench.site.pages import header
from bench.site.paper import paper_values

REPO = Path(__file__).resolve().parents[3]


def headers(page: str) -> dict[str, tuple[str, str]]:
    return {key: (kind, text) for key, kind, text in re.findall(r'<th data-key="(\w+)" data-type="(num|text)">([^<]*)</th>', page)}


def test_every_numeric_header_has_its_arrow(site):
    shown = headers((site / "index.html").read_text())
    assert all(text[-1] in "↑↓" for kind, text in shown.values() if kind == "num"), shown
    assert shown["accuracy"][1].endswith("↑") and shown["accuracy_delta"][1].endswith("↑")
    assert shown["worst"][1] == "Worst case ↓" and shown["bytes_up"][1].endswith("↓")  # SSIM: lower is more private
    attack = headers((site / "attacks" / "decoder-ref.html").read_text())
    assert attack["headline"][1] == "Headline metric ↓"


def test_a_board_no_attack_scored_has_no_worst_case_columns():
    from bench.site.pages import board_columns

    entry = {"accuracy": {}}
    assert [k for k, _, _ in board_columns([entry], None)] == ["rank", "defense", "cr", "accuracy", "accuracy_delta", "bytes_up",
                                                               "bytes_down", "seeds", "flags", "entry"]
    assert "worst" in [k for k, _, _ in board_columns([entry], "ssim")]


def test_the_arrow_is_the_metrics_declared_direction_not_its_name(monkeypatch):
    assert header("worst", "Worst case", "mse") == "Worst case ↑"  # a larger error is more private
    monkeypatch.setitem(labels.PRIVACY_DIRECTION, "ssim", 1)
    monkeypatch.setitem(labels.VICTIM_DIRECTION, "accuracy", -1)
    assert header("worst", "Worst case", "ssim") == "Worst case ↑"
    assert header("accuracy", "Accuracy (%)", None) == "Accuracy (%) ↓"


def test_accuracy_is_shown_as_its_delta_against_the_matched_raw_victim(site):
    entries = {e["defense"]["name"]: e for e in (json.loads(p.read_text()) for p in (site / "entries").glob("*.json"))}
    raw, lsf = entries["raw"], entries["lightsplit-f"]
    assert raw["accuracy_delta_vs_raw"]["mean"] == 0.0
    assert lsf["accuracy_delta_vs_raw"]["mean"] == pytest.approx(lsf["accuracy"]["mean"] - raw["accuracy"]["mean"])
    index = (site / "index.html").read_text()
    shown = labels.number(lsf["accuracy_delta_vs_raw"]["mean"], "accuracy", signed=True)
    assert re.search(rf'<td data-key="accuracy_delta" class="num" data-sort="[^"]+" title="[^"]+">{shown} ± ', index)


def test_dp_rows_show_epsilon_delta_and_the_accountant_from_the_committed_records():
    from bench.cli.report import load_results
    from bench.report.combine import combine_tables
    from bench.site.entries import build_entries
    from bench.site.pages import boards
    from bench.site.records import record_files

    folder = "results/issue12-reproduction"
    table, sources = combine_tables([(folder, load_results(REPO / folder))])
    entries = build_entries(table, records=record_files({c: str(REPO / folder) for c in sources}))
    dp = [e for e in entries if "dp" in e]
    assert {e["defense"]["name"] for e in dp} == {"raw+dp", "lightsplit-f+dp"}
    assert all("dp" not in e for e in entries if "+dp" not in e["defense"]["name"])
    assert dp[0]["dp"]["epsilon_total"] == pytest.approx(93611.78, abs=0.01) and dp[0]["dp"]["delta"] == 1e-5
    rows = [r for b in boards(entries) for r, e in zip(b.rows, b.entries) if "dp" in e]
    assert {r["dp"].text for r in rows} == {"ε = 93,612, δ = 1e-05 (Opacus RDP accountant)"}
    assert dp_cell(None).text == "no DP"


def test_each_defense_and_attack_links_its_paper_and_venue(site):
    sdar, fora = attack_info("sdar", profiles=[]).described, attack_info("fora", profiles=[]).described
    assert sdar.links == [("arXiv:2310.10483", "https://arxiv.org/abs/2310.10483")] and sdar.venues == ["NDSS 2025"]
    assert fora.links == [] and fora.venues == ["CVPR 2024"]  # its Paper: line names no identifier
    block = defense_info("block-local").parts[0][1]  # "LightSplit, Sect. IV-B": named, identified elsewhere
    assert block.links == [("arXiv:2605.13265", "https://arxiv.org/abs/2605.13265")]
    index = (site / "index.html").read_text()
    assert index.count('<a class="paper" href="https://arxiv.org/abs/2605.13265">arXiv:2605.13265</a>') >= 3  # raw, LSF, prior


CLAIM = Claim("sdar-raw-l4-ssim", "Table X", "SDAR reconstructs the undefended CIFAR-10 L=4 cut at SSIM 0.83", "ssim",
              Selector("raw", "sdar", dataset="cifar10"), "≈", value=0.83, tolerance=0.05, profiles=("paper",))


def sdar_entry(defense: str = "raw", budget: float = 1.0) -> dict:
    stat = {"mean": 0.71, "ci95": 0.02, "n": 3, "n_runs": 3, "n_diverged": 0, "note": None}
    return {"defense": {"name": defense, "knobs": {"lambda_wcc": 0.0}}, "dataset": "cifar10", "cut": "l4", "profile": "cpu",
            "accuracy": stat, "attacks": [{"attack": "sdar", "settings": {"budget": budget}, "metrics": {"ssim": stat}}]}


def test_the_papers_number_stands_beside_the_measured_one():
    entry = sdar_entry()
    entry["paper"] = paper_values(entry, [CLAIM])
    assert [(p["claim"], p["value"], p["measured"]["mean"]) for p in entry["paper"]] == [("sdar-raw-l4-ssim", 0.83, 0.71)]
    assert paper_text(entry, "sdar", "ssim") == "; paper 0.830 (Table X)"
    [row] = paper_rows(entry)
    assert row["value"] == "SSIM ↓ 0.830" and row["measured"] == "SSIM ↓ 0.710 ± 0.020" and "this entry ran cpu" in row["note"]
    assert paper_values(sdar_entry("lightsplit-f"), [CLAIM]) == []  # another configuration
    assert paper_values(sdar_entry(budget=4.0), [CLAIM]) == []  # the paper's budget is the default one


def test_docstrings_render_bullets_emphasis_and_roles_as_html():
    html = paragraphs(["Reads *cut maps* (:meth:`~defenses.base.Defense.cut_map`, ``z``).", "* one **two**", "* 2 < 3",
                       "1. first", "tail"])
    assert html == ("<p>Reads <em>cut maps</em> (<code>cut_map</code>, <code>z</code>).</p>\n<ul>\n<li>one <strong>two</strong></li>\n"
                    "<li>2 &lt; 3</li>\n</ul>\n<ol>\n<li>first</li>\n</ol>\n<p>tail</p>")
    sdar = str(paragraphs(attack_info("sdar", profiles=[]).described.description))
    assert "<ul>" in sdar and "<p>* " not in sdar and ":class:`" not in sdar and ":mod:`" not in sdar
