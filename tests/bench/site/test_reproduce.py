"""Issue 40, item 5: every entry page shows the ``bench run`` commands that made it, its grid file and
its code versions; an entry from a dirty tree or of mixed versions is flagged."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

from bench.cli.run import _from_options, run_command
from bench.site.entries import entry_flags
from bench.site.pages import flag_texts
from bench.site.records import RecordFile
from bench.site.reproduce import code_flags, commands
from tests.bench.cli.runner import run_cli
from tests.bench.site.conftest import bench


def expanded_ids(command: str) -> set[str]:
    """The ids of the cells ``command`` (a ``bench run`` line) expands to, as bench run expands them."""
    args = shlex.split(command)
    assert args[:2] == ["bench", "run"]
    ctx = run_command.make_context("run", args[2:])
    cells, _, _ = _from_options(ctx.params)
    return {c.id for c in cells}


def entries(site: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((site / "entries").glob("*.json"))]


def test_every_entrys_commands_expand_to_every_cell_it_summarises_and_its_page_shows_them(site, grid):
    for entry in entries(site):
        made = set().union(*(expanded_ids(c) for c in entry["reproduce"]["commands"]))
        assert {r["cell_id"] for r in entry["records"]} <= made, entry["entry_id"]
        assert all(f"--out {grid}" in c and "--profile smoke" in c for c in entry["reproduce"]["commands"])
        page = (site / "entries" / f"{entry['entry_id']}.html").read_text()
        for command in entry["reproduce"]["commands"]:
            assert f'<pre class="command"><code>{command}</code></pre>' in page
        for version in entry["code_versions"]:
            assert f"<code>{version}</code>: " in page
    lsf = next(e for e in entries(site) if e["defense"]["name"] == "lightsplit-f")
    assert any("--defense lightsplit-f --knob cr=8 --attack decoder-ref,prior --seeds 0,1"
               in c for c in lsf["reproduce"]["commands"])  # one command for both; budget=1 and float32 are the defaults


def test_a_command_missing_a_knob_would_not_remake_the_cell():
    """The check above can fail: a command without the cell's CR expands to other cells."""
    record = RecordFile("x" * 12, "out", "cells/x.json", "0" * 64, None,
                        cell={"lambda_wcc": 0.0}, knobs={"defense": {"cr": 16.0}, "attack": {}})
    entry = {"dataset": "digits", "victim": "mnistnet", "cut": "split-2", "profile": "smoke",
             "defense": {"name": "lightsplit-f", "knobs": {"cr": 16.0}}, "setting": {"clients": 1, "protocol": "ushaped"},
             "records": [{"cell_id": record.cell_id, "attack": "none", "seed": 3, "results": "out"}]}
    [command] = commands(entry, {record.cell_id: record})
    assert command == ("bench run --dataset digits --victim mnistnet --cut split-2 --defense lightsplit-f --knob cr=16 "
                       "--attack none --seeds 3 --profile smoke --out out")
    assert expanded_ids(command) != expanded_ids(command.replace("--knob cr=16", "--knob cr=8"))


def test_a_record_older_than_a_knob_its_attack_now_reads_gets_its_own_command():
    """Two SDAR cells on one seed, one stored before ``moment_tie`` existed (its knobs lack it): one
    command naming ``moment_tie=1`` for both would remake the newer cell only."""
    from bench.run.cell import Cell

    base = {"dataset": "digits", "victim": "mnistnet", "cut": "split-2", "defense": "raw", "profile": "smoke", "seed": 0,
            "attack": "sdar"}
    old, new = Cell(**base), Cell(**base, attack_knobs=(("moment_tie", 1.0),))
    records = {c.id: RecordFile(c.id, "out", f"cells/{c.id}.json", "0" * 64, None, cell={"lambda_wcc": 0.0},
                                knobs={"defense": {}, "attack": {"budget": 1.0, **dict(c.attack_knobs)}}) for c in (old, new)}
    entry = {"dataset": "digits", "victim": "mnistnet", "cut": "split-2", "profile": "smoke",
             "defense": {"name": "raw", "knobs": {}}, "setting": {"clients": 1, "protocol": "ushaped"},
             "records": [{"cell_id": c.id, "attack": "sdar", "seed": 0, "results": "out"} for c in (old, new)]}
    made = commands(entry, records)
    assert len(made) == 2
    assert {old.id, new.id} <= set().union(*(expanded_ids(c) for c in made))


def test_the_results_folders_grid_file_is_shown_on_the_entry_page(grid_copy, tmp_path):
    (grid_copy / "grid.toml").write_text('out = "results/x"\n\n[[grid]]\ndefense = ["raw", "lightsplit-f"]\n')
    out = tmp_path / "site"
    bench(["site", "--results", str(grid_copy), "--out", str(out)])
    for entry in entries(out):
        assert entry["reproduce"]["grid_files"] == [f"{grid_copy}/grid.toml"]
        page = (out / "entries" / f"{entry['entry_id']}.html").read_text()
        assert f"bench run --config {grid_copy}/grid.toml" in page and "defense = [&#34;raw&#34;, &#34;lightsplit-f&#34;]" in page


def test_dirty_and_mixed_code_versions_are_flagged():
    assert code_flags(["2c441fc6e987"]) == (False, False)
    assert code_flags(["2c441fc6e987-dirty"]) == (True, False)
    assert code_flags(["2c441fc6e987", "b6e241f00000"]) == (False, True)
    entry = {"ranking": {"metric": None}, "worst_case": {}, "accuracy": {"mean": 0.9, "ci95": 0.01},
             "code_versions": ["2c441fc6e987", "b6e241f00000-dirty"], "attacks": []}
    entry["flags"] = entry_flags(entry, failed_cells=[], diverged_cells=[], not_learned_cells=[], not_converged=[],
                                 missing_attacks=[])
    assert entry["flags"]["dirty_code"] and entry["flags"]["mixed_code_versions"] and entry["flags"]["flagged"]
    assert flag_texts(entry) == ["code with uncommitted changes (-dirty)", "2 code versions"]
    entry["code_versions"] = ["2c441fc6e987"]
    entry["flags"] = entry_flags(entry, failed_cells=[], diverged_cells=[], not_learned_cells=[], not_converged=[],
                                 missing_attacks=[])
    assert not entry["flags"]["flagged"] and flag_texts(entry) == []


def test_the_command_counts_boards_as_the_site_splits_them(capsys, grid, tmp_path, monkeypatch):
    """Two entries of one (profile, dataset) on two cuts are two boards (bench.site.row_labels.board_key)."""
    import bench.site.build

    setting = {"protocol": "ushaped", "heads": "sch", "partition": "iid", "alpha": None, "clients": 1}
    made = [{"profile": "smoke", "dataset": "digits", "victim": "mnistnet", "cut": cut, "setting": setting}
            for cut in ("split-1", "split-2")]
    monkeypatch.setattr(bench.site.build, "build_site", lambda **_: made)
    code, out, err = run_cli(capsys, ["site", "--results", str(grid), "--out", str(tmp_path / "site")])
    assert code == 0, err
    assert ": 2 leaderboards, 2 entries" in out
