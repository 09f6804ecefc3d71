"""examples/board_table.py: a built site's board read back as a markdown table."""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _board_table():
    spec = importlib.util.spec_from_file_location("board_table", REPO / "examples" / "board_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip("|").split("|")]


def _rows(lines: list[str]) -> list[list[str]]:
    """The table's data rows (not its header or rule)."""
    rows = [_cells(line) for line in lines if line.startswith("| ")]
    return [row for row in rows if row[0] not in ("defense", "---")]


def test_raw_comes_first_then_the_cr_group_with_the_entries_numbers(site):
    lines = _board_table().board_rows(site, dataset="digits", profile="smoke", cr=8)
    assert lines[0].startswith("**") and "smoke profile" in lines[0]  # the board's title
    rows = _rows(lines)
    assert [row[0].split(" (")[0] for row in rows] == ["Raw", "LightSplit-F"]
    assert rows[0][-1] == "–"  # raw is the reference, never ranked
    entry = next(json.loads(p.read_text()) for p in (site / "entries").glob("*.json")
                 if json.loads(p.read_text())["defense"]["name"] == "lightsplit-f")
    worst = entry["worst_case"]["ssim"]["stat"]
    assert rows[1][3] == f"{worst['mean']:.3f} ± {worst['ci95']:.3f}"
    assert rows[1][2] == f"{entry['bytes_per_sample']['up']['mean']:.0f}"
    assert rows[1][5] == "2"  # seeds


@pytest.mark.parametrize(("ranked", "missing", "shown"), [(True, [], "1"), (False, [], "unranked"),
                                                         (True, ["sdar (moment_tie=1)"], "1*")])
def test_a_ranked_row_gets_its_rank_one_whose_victim_stayed_at_chance_none_and_one_short_of_attacks_a_star(
        site, tmp_path, ranked, missing, shown):
    copy = tmp_path / "site"
    shutil.copytree(site / "entries", copy / "entries")
    for path in (copy / "entries").glob("*.json"):
        entry = json.loads(path.read_text())
        if entry["defense"]["name"] == "lightsplit-f":
            entry["ranking"]["ranked"] = ranked
            entry["flags"]["missing_attacks"] = missing
            path.write_text(json.dumps(entry))
    rows = _rows(_board_table().board_rows(copy, dataset="digits", profile="smoke", cr=8))
    assert [row[-1] for row in rows] == ["–", shown]


def test_a_board_with_no_entries_is_one_line_and_a_non_zero_exit(site):
    with pytest.raises(SystemExit, match="no mnist entries at profile smoke and CR 8"):
        _board_table().board_rows(site, dataset="mnist", profile="smoke", cr=8)


def test_rows_on_another_board_get_a_table_of_their_own(site, tmp_path):
    copy = tmp_path / "site"
    shutil.copytree(site / "entries", copy / "entries")
    for path in (copy / "entries").glob("*.json"):
        entry = json.loads(path.read_text())
        if entry["defense"]["name"] == "lightsplit-f":
            entry["setting"]["clients"] = 5
            path.write_text(json.dumps(entry))
    lines = _board_table().board_rows(copy, dataset="digits", profile="smoke", cr=8)
    titles = [line for line in lines if line.startswith("**")]
    assert len(titles) == 1 and "5 clients" in titles[0]  # raw's board has no CR-8 row, so no table
    assert [row[0].split(" (")[0].split(" ·")[0] for row in _rows(lines)] == ["LightSplit-F"]
