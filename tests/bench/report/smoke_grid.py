"""A results folder of real smoke cells on digits (MnistNet split-2, seed 0), for report tests that
read what a run stores."""
from pathlib import Path

from bench.run.cell import Cell
from bench.run.cell_runner import RunContext, execute_cell
from bench.run.store import OK, ResultStore


def stored_smoke_grid(root: Path, defenses: list[tuple[str, dict]], attacks: list[tuple[str, dict]]) -> ResultStore:
    """Every (defense, attack) cell run and stored under ``root/results`` (victims cached under
    ``root/checkpoints``); a cell that fails fails the fixture with its traceback."""
    ctx = RunContext(data_root=root / "data", cache_dir=root / "checkpoints")
    store = ResultStore(root / "results")
    for defense, knobs in defenses:
        for attack, attack_knobs in attacks:
            record = execute_cell(Cell(dataset="digits", victim="mnistnet", cut="split-2", defense=defense, profile="smoke",
                                       seed=0, attack=attack, defense_knobs=knobs, attack_knobs=attack_knobs), ctx)
            assert record.status == OK, record.error
            store.write(record)
    return store
