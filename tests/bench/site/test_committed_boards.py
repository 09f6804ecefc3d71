"""The leaderboard of every committed results folder (issue 40): rows told apart, ranked among rows
that send the same bytes, worst cases counted over the seeds they use, and flagged where they say
little. Read from the site of the folders git tracks (the ``committed_site`` fixture, shared with the
browser tests)."""
from __future__ import annotations

import math

import pytest

from bench.site.pages import SINGLE_SEED, boards
from bench.site.ranking import group_of
from bench.site.row_labels import SETTING_FIELDS, board_key, duplicate_labels

# The committed site's xdist group: it is built once, on the worker that runs these and the browser tests.
pytestmark = pytest.mark.xdist_group("committed-site")


@pytest.fixture(scope="module")
def committed(committed_site) -> list[dict]:
    return committed_site.entries


@pytest.fixture(scope="module")
def committed_boards(committed):
    return boards(committed)


def test_no_two_rows_of_a_board_share_a_label(committed_boards):
    collisions = {b.title: duplicate_labels(r["defense"].text for r in b.rows) for b in committed_boards}
    assert {title: found for title, found in collisions.items() if found} == {}
    assert len({b.id for b in committed_boards}) == len(committed_boards)  # every board its own anchor


def test_a_board_holds_one_victim_cut_and_setting(committed_boards):
    for board in committed_boards:
        assert len({board_key(e) for e in board.entries}) == 1, board.title
    multi = [b for b in committed_boards if any((e["setting"]["clients"] or 1) > 1 for e in b.entries)]
    assert multi and all(all(e["setting"]["clients"] > 1 for e in b.entries) for b in multi)
    assert all(e["setting"][f] == b.entries[0]["setting"][f] for b in committed_boards for e in b.entries for f in SETTING_FIELDS)


def test_rows_ranked_together_send_about_the_same_bytes(committed_boards):
    for board in committed_boards:
        groups: dict[tuple, list[float]] = {}
        for entry in board.entries:
            groups.setdefault(group_of(entry), []).append(entry["bytes_group"]["bytes"])
        for sizes in groups.values():
            assert max(sizes) / min(sizes) < 2.0, (board.title, sizes)  # within √2 of the group's CR either way


def test_a_learned_1x1_that_sends_8x_at_nominal_16x_is_marked_and_ranked_at_8x(committed):
    learned = [e for e in committed if e["dataset"] == "mnist" and e["defense"]["name"] == "learned-1x1"
               and e["defense"]["knobs"].get("cr") == 16.0 and e["setting"]["clients"] == 1]
    assert learned, "the committed MNIST learned 1×1 at CR 16 is gone: choose another example"
    for entry in learned:
        assert entry["bytes_group"]["group_cr"] == 8.0 and entry["bytes_group"]["matches_nominal"] is False
    mismatched = [e for e in committed if e["bytes_group"]["matches_nominal"] is False]
    assert all(not math.isclose(e["bytes_group"]["group_cr"], e["bytes_group"]["nominal_cr"] or 1.0) for e in mismatched)


def test_the_seed_count_shown_is_the_count_the_worst_case_uses(committed_boards):
    checked = 0
    for board in committed_boards:
        for entry, row in zip(board.entries, board.rows):
            if entry["ranking"]["value"] is None:
                continue
            worst = entry["worst_case"][entry["ranking"]["metric"]]
            used = worst["stat"]["n"]
            assert entry["ranking"]["n"] == used == len(worst["seeds"])
            assert row["seeds"].sort == used
            assert (SINGLE_SEED in row["worst"].text) == (used == 1) == entry["flags"]["single_seed_worst_case"]
            checked += 1
    assert checked > 40


def test_a_first_ranked_worst_case_not_above_the_floor_carries_its_flag(committed_boards):
    firsts = [(b, r, e) for b in committed_boards for r, e in zip(b.rows, b.entries) if r["rank"].text == "1"]
    unmeasured = [(b, r) for b, r, e in firsts if e["flags"]["not_above_floor"]]
    assert unmeasured  # F-MNIST's UnSplit-only board: every worst case is within noise of the floor
    for board, row in unmeasured:
        assert "worst case not above floor" in row["flags"].text and row["flags"].sort >= 1, board.title


def test_a_ci_wider_than_the_metric_range_is_flagged(committed):
    wide = [e for e in committed if "accuracy" in e["flags"]["wide_ci"]]
    assert wide and all(2 * e["accuracy"]["ci95"] > 1.0 and e["flags"]["flagged"] for e in wide)
    assert all(2 * (e["accuracy"]["ci95"] or 0) <= 1.0 for e in committed if e not in wide)
