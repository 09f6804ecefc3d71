import textwrap

import pytest

from bench.run.grid_file import load_grid_file
from bench.run.record import CellRecord
from bench.run.store import ResultStore
from tests.bench.cli.runner import run_cli

GRIDS = """
[defaults]
dataset = "digits"
profile = "smoke"
seeds = [0]
[[grid]]
defense = "raw"
[[grid]]
defense = ["raw", "lightsplit-f"]
knobs = {{ cr = [8, 16] }}
{extra}
"""


def write_grid(tmp_path, extra: str = "", out=None):
    out = out or tmp_path / "out"
    path = tmp_path / "grid.toml"
    path.write_text(f'out = "{out}"\ndownload = false\n' + textwrap.dedent(GRIDS.format(extra=extra)))
    return path, out


@pytest.mark.parametrize("extra,args,needle", [
    ("[[grid]]\ndefence = 'raw'", [], "grid.toml: [[grid]] 3: unknown key 'defence' (known: dataset,"),
    ("[[grid]]\ndefense = 'raw'\nseeds = 'zero'", [], "[[grid]] 3: 'seeds' must be an integer or a list of them, got 'zero'"),
    ("[[grid]]\ndefense = 'raw'\nattack = 'nosuch'", [], "[[grid]] 3: unknown attack 'nosuch'"),
    ("[[grid]]\ndefense = 'lightsplit-f'\nknobs = { cr = 7 }", [], "[[grid]] 3: lightsplit-f: CR 7 gives no integer k >= 1"),
    ("[[grid]]\ndefense = 'raw'\nattack = 'har-recon'", [], "attack har-recon applies to tabular data, not image data"),
    ("", ["--defense", "raw", "--cr", "8"], "--config cannot be combined with --defense, --cr (put the grid's choices in the file)"),
    ("", ["--knob", "cr=8"], "--config cannot be combined with --knob"),
])
def test_bad_grid_file_is_one_line_exit_2_and_writes_nothing(capsys, tmp_path, extra, args, needle):
    path, out = write_grid(tmp_path, extra)
    code, stdout, stderr = run_cli(capsys, ["run", "--config", str(path), "--quiet", *args])
    assert code == 2, stdout
    assert needle in stderr
    assert len(stderr.strip().splitlines()) == 1 and stderr.startswith("error: ")
    assert not out.exists()


def test_a_missing_grid_file_is_one_line(capsys, tmp_path):
    code, _, stderr = run_cli(capsys, ["run", "--config", str(tmp_path / "nosuch.toml")])
    assert code == 2 and stderr == f"error: {tmp_path / 'nosuch.toml'}: no such file\n"


def test_dry_run_lists_stored_and_to_run_cells_with_an_estimate_and_writes_nothing(capsys, tmp_path):
    path, out = write_grid(tmp_path)
    code, stdout, stderr = run_cli(capsys, ["run", "--config", str(path), "--dry-run"])
    assert (code, stderr) == (0, "")
    assert stdout.splitlines()[-1] == "3 cells, 0 stored, 3 to run; no stored timings to estimate the time left"
    assert not out.exists()

    raw, cr8, cr16 = load_grid_file(path).cells
    store = ResultStore(out)
    store.write(CellRecord(cell=raw, status="ok", wall_seconds=10.0))
    store.write(CellRecord(cell=cr8, status="ok", wall_seconds=30.0))
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    code, stdout, stderr = run_cli(capsys, ["run", "--config", str(path), "--dry-run", "--jobs", "2"])
    assert (code, stderr) == (0, "")
    assert stdout.splitlines() == [
        f"stored  {raw.id}  digits mnistnet/split-2 smoke raw seed=0",
        f"stored  {cr8.id}  digits mnistnet/split-2 smoke lightsplit-f cr=8 seed=0",
        f"to run  {cr16.id}  digits mnistnet/split-2 smoke lightsplit-f cr=16 seed=0",
        "3 cells, 2 stored, 1 to run; about 20s of cell time left, from stored timings (10s over 2 jobs at best)",
    ]
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before  # no lock, no table, no checkpoint

    code, stdout, _ = run_cli(capsys, ["run", "--config", str(path), "--dry-run", "--quiet", "--out", str(tmp_path / "other")])
    assert stdout == "3 cells, 0 stored, 3 to run; no stored timings to estimate the time left\n"
    assert not (tmp_path / "other").exists()


def test_dry_run_works_for_a_grid_named_by_options(capsys, tmp_path):
    out = tmp_path / "out"
    args = ["run", "--dataset", "digits", "--profile", "smoke", "--defense", "lightsplit-f", "--cr", "8", "--out", str(out), "--dry-run"]
    code, stdout, _ = run_cli(capsys, args)
    assert code == 0
    assert [line[:6] for line in stdout.splitlines()[:-1]] == ["to run", "to run"]  # with its matched raw cell
    assert stdout.splitlines()[-1].startswith("2 cells, 0 stored, 2 to run")
    assert not out.exists()


def test_a_grid_file_runs_every_grid_into_one_folder_once(capsys, tmp_path):
    path, out = write_grid(tmp_path, "[[grid]]\ndefense = 'lightsplit-f'\nknobs = { cr = 8 }")
    path.write_text(path.read_text().replace("cr = [8, 16]", "cr = 8"))
    code, stdout, stderr = run_cli(capsys, ["run", "--config", str(path), "--quiet"])
    assert code == 0, stderr
    assert stdout == f"2 cells run, 0 already stored, 0 failed; results in {out}/results.parquet\n"
    assert {r.cell.defense for r in ResultStore(out).records()} == {"raw", "lightsplit-f"}
