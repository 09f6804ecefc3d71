from bench.run.cache_layout import CACHE_FOLDER, SNAPSHOT_FOLDER
from bench.run.cell import Cell
from bench.run.dry_run import STOPPED, describe, dry_run_lines, estimate_seconds, format_duration
from bench.run.record import CellRecord
from bench.run.store import ResultStore

CELL = dict(dataset="digits", victim="mnistnet", cut="split-2", profile="smoke", seed=0)


def record(wall: float, status: str = "ok", **factors) -> CellRecord:
    return CellRecord(cell=Cell(**{**CELL, "defense": "raw", **factors}), status=status, wall_seconds=wall)


def test_the_estimate_takes_the_median_of_the_most_alike_stored_cells():
    stored = [record(10, attack="prior"), record(20, attack="prior", seed=1), record(90, attack="prior", seed=2),
              record(100, attack="fora", dataset="mnist"), record(1000, status="failed", attack="fora"), record(0, attack="sdar")]
    same_dataset_victim_attack = Cell(**{**CELL, "seed": 5}, defense="topk", attack="prior")
    same_attack_only = Cell(**CELL, defense="raw", attack="fora")
    nothing_alike = Cell(**CELL, defense="raw", attack="sdar")  # its stored cell has no wall time
    assert estimate_seconds([same_dataset_victim_attack], stored) == 20
    assert estimate_seconds([same_attack_only], stored) == 100  # the failed record does not count
    assert estimate_seconds([nothing_alike], stored) == 55  # median of 10, 20, 90, 100
    assert estimate_seconds([same_dataset_victim_attack, same_attack_only], stored) == 120
    assert estimate_seconds([nothing_alike], [record(0), record(5, status="failed")]) is None



def test_the_estimate_scales_with_the_attack_budget_when_no_stored_cell_ran_at_it():
    stored = [record(300, attack="sdar"), record(500, attack="sdar", seed=1), record(1200, attack="sdar", attack_knobs={"budget": 4.0})]
    at_x16 = Cell(**CELL, defense="raw", attack="sdar", attack_knobs={"budget": 16.0})
    at_x4 = Cell(**{**CELL, "seed": 3}, defense="raw", attack="sdar", attack_knobs={"budget": 4.0})
    assert estimate_seconds([at_x4], stored) == 1200  # a stored cell at the same budget: its time as it is
    assert estimate_seconds([at_x16], stored) == 16 * 300  # median of 300, 500 and 1200 / 4 per unit of budget
    other_profile = Cell(**{**CELL, "profile": "cpu"}, defense="raw", attack="sdar", attack_knobs={"budget": 4.0})
    assert estimate_seconds([other_profile], stored) == 4 * 300  # another profile: scaled from the same attack

def test_durations_read_at_a_glance():
    assert [format_duration(s) for s in (0.4, 42, 425, 12_000, 190_000)] == ["0s", "42s", "7m 05s", "3h 20m", "2d 4h"]


def test_a_cell_is_described_by_the_factors_not_at_their_usual_value():
    cell = Cell(**CELL, defense="lightsplit-f", defense_knobs={"cr": 8.0}, lambda_wcc=0.1, attack="prior", clients=2)
    assert describe(cell) == "digits mnistnet/split-2 smoke lightsplit-f cr=8 lambda_wcc=0.1 prior seed=0 clients=2"
    assert describe(Cell(**CELL, defense="raw")) == "digits mnistnet/split-2 smoke raw seed=0"


def test_a_dry_run_leaves_a_damaged_record_where_it_is(tmp_path, capsys):
    stored, damaged = Cell(**CELL, defense="raw"), Cell(**{**CELL, "seed": 1}, defense="raw")
    store = ResultStore(tmp_path)
    store.write(CellRecord(cell=stored, status="ok", wall_seconds=30))
    store.path_of(damaged).write_text("{cut short")
    lines = dry_run_lines([stored, damaged], tmp_path, jobs=2)
    assert lines[0].startswith(f"stored  {stored.id}") and lines[1].startswith(f"to run  {damaged.id}")
    assert lines[2] == "2 cells, 1 stored, 1 to run; about 30s of cell time left, from stored timings (15s over 2 jobs at best)"
    assert store.path_of(damaged).read_text() == "{cut short" and not store.quarantine_dir.exists()
    assert capsys.readouterr().err.count("warning:") == 1


def test_a_record_kept_after_a_failed_write_counts_as_stored(tmp_path):
    kept, failed, new = (Cell(**{**CELL, "seed": seed}, defense="raw") for seed in (0, 1, 2))
    store = ResultStore(tmp_path)
    store.keep_for_recovery(CellRecord(cell=kept, status="ok", wall_seconds=30))
    store.keep_for_recovery(CellRecord(cell=failed, status="failed", wall_seconds=30))
    lines = dry_run_lines([kept, failed, new], tmp_path)
    assert lines[0].startswith(f"recovered  {kept.id}") and lines[1].startswith(f"to run  {failed.id}")
    assert lines[3].startswith(f"3 cells, 1 stored (1 kept in {store.recovery_dir}: the next run moves them into "
                               "cells/), 2 to run")
    assert (store.recovery_dir / f"{kept.id}.json").exists() and not store.cells_dir.exists()  # nothing moved


def test_a_cell_stopped_part_way_says_it_resumes_from_its_snapshot(tmp_path):
    stopped, other = Cell(**CELL, defense="raw", attack="sdar"), Cell(**CELL, defense="topk", attack="sdar")
    folder = tmp_path / CACHE_FOLDER / SNAPSHOT_FOLDER
    folder.mkdir(parents=True)
    (folder / f"{stopped.id}-0123456789ab.pt").write_bytes(b"")
    lines = dry_run_lines([stopped, other], tmp_path)
    assert lines[0] == f"to run  {stopped.id}  {describe(stopped)}{STOPPED}"
    assert lines[1] == f"to run  {other.id}  {describe(other)}"
    assert "resumes from its snapshot" in STOPPED
