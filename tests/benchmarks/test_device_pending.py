"""benchmarks/device/pending.toml: the committed list reads, and a bad item is one line naming it."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks" / "device"))
from pending import PendingError, read_pending  # noqa: E402


def test_the_committed_pending_list_reads_in_priority_order_and_its_grids_expand(monkeypatch):
    from bench.run.grid_file import load_grid_file

    monkeypatch.chdir(REPO)
    items = read_pending()
    assert [i.kind for i in items][0] == "tests"  # the GPU tests first: they say whether the rest can run
    for item in items:
        if item.grid:
            assert load_grid_file(REPO / item.grid).cells


@pytest.mark.parametrize("text, needle", [
    ('[[pending]]\nname = "x"\nkind = "bench"\ngpu_minutes = 1\n', "kind 'bench' is not one of tests, grid, utilisation"),
    ('[[pending]]\nname = "x"\nkind = "grid"\ngrid = "nosuch.toml"\ngpu_minutes = 1\n', "grid file 'nosuch.toml' not found"),
    ('[[pending]]\nname = "x"\nkind = "tests"\ngpu_minutes = 1\ncolour = 1\n', "unknown key 'colour'"),
    ('[[pending]]\nname = "x"\nkind = "tests"\ngpu_minutes = 0\n', "must be positive"),
    ('[[pending]]\nname = "x"\nkind = "tests"\n', "[[pending]] 1:"),
    ('[[pending]\n', "cannot be read"),
])
def test_a_bad_item_is_one_line_naming_it(tmp_path, monkeypatch, text, needle):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pending.toml").write_text(text)
    with pytest.raises(PendingError) as err:
        read_pending(tmp_path / "pending.toml")
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_only_names_known_items(tmp_path):
    (tmp_path / "pending.toml").write_text('[[pending]]\nname = "a"\nkind = "tests"\ngpu_minutes = 1\n')
    assert [i.name for i in read_pending(tmp_path / "pending.toml", ("a",))] == ["a"]
    with pytest.raises(PendingError, match="no pending item 'b'"):
        read_pending(tmp_path / "pending.toml", ("b",))
