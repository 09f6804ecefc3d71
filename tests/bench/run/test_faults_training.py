"""Training and attack faults: a non-finite loss, payload or gradient marks the cell diverged at its step,
a non-finite attack output marks the attack diverged, and reports name every configuration left with
only failed or diverged cells, with the first line of each reason."""
import pytest
import torch

from attacks import ATTACKS
from attacks.prior import MeanImagePrior
from bench.run.cell import Cell
from bench.run.engine import SplitTrainer
from bench.run.training import build_model
from defenses import DEFENSES
from defenses.knobs import CR
from defenses.raw import RawDefense
from tests.bench.cli.runner import run_cli
from tests.bench.run.faults import one_error_line, records, run

NAN_FROM_STEP = 2


class NanDefense(RawDefense):
    """Sends NaN from its third training step on."""

    knobs = (CR,)

    def __init__(self, *, cut_shape, cr=None, seed=0):
        super().__init__(cut_shape=cut_shape, seed=seed)
        self.calls = 0

    def encode(self, z):
        if self.training:
            self.calls += 1
        return z.flatten(1) * (float("nan") if self.calls > NAN_FROM_STEP else 1.0)


class BrokenDefense(RawDefense):
    knobs = (CR,)

    def __init__(self, *, cut_shape, cr=None, seed=0):
        super().__init__(cut_shape=cut_shape, seed=seed)

    def encode(self, z):
        raise RuntimeError("this defense is broken on purpose\nsecond line of its reason")


class NanOutput(MeanImagePrior):
    def run(self):
        output = super().run()
        output.reconstructions[0, 0, 0, 0] = float("nan")
        return output


@pytest.fixture
def plugins(monkeypatch):
    """The defenses and attack above, registered for one test only."""
    monkeypatch.setitem(DEFENSES._items, "nan-defense", NanDefense)
    monkeypatch.setitem(DEFENSES._items, "broken-defense", BrokenDefense)
    monkeypatch.setitem(ATTACKS._items, "nan-output", NanOutput)


def _record(out, **fields):
    import json

    cell = Cell(**{**dict(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=0), **fields})
    return json.loads((out / "cells" / f"{cell.id}.json").read_text())


def test_a_defense_that_sends_nan_stores_its_cell_as_diverged_at_its_step(capsys, out, plugins):
    before = records(out)
    code, _, stderr = run(capsys, out, "--defense", "raw,nan-defense", "--cr", "8")
    assert code == 0 and stderr == ""
    record = _record(out, defense="nan-defense", defense_knobs={"cr": 8.0})
    assert record["status"] == "ok"
    assert record["metrics"] == {"accuracy": None, "diverged": 1.0, "diverged_at_step": float(NAN_FROM_STEP)}
    assert record["notes"]["accuracy"].startswith(f"victim training diverged at step {NAN_FROM_STEP} (epoch 0)")
    assert {name: data for name, data in records(out).items() if name in before} == before
    code, table, _ = run_cli(capsys, ["report", "--results", str(out), "--table", "II"])
    (row,) = [line for line in table.splitlines() if "nan-defense" in line and line.startswith("|")]
    assert row.split("|")[-2].strip() == "—¹"  # no accuracy: the footnote says it diverged
    assert "¹ all 1 runs diverged" in table
    assert (f"No result for dataset digits, defense nan-defense, cr 8×, attack none: every stored cell failed or diverged "
            f"(1 diverged): victim training diverged at step {NAN_FROM_STEP} (epoch 0)") in table


def test_a_gradient_that_is_not_finite_stops_training_at_its_step(digits):
    cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=0)
    torch.manual_seed(0)

    class NanGradient:  # a server that returns NaN at step 1 only: that step's loss and payload are finite
        def client_gradient(self, view):
            return view.grad * (float("nan") if view.step == 1 else 1.0)

    trainer = SplitTrainer(model=build_model(cell, digits), lr=1e-3, active=NanGradient())
    batches = [(digits.members.x[i : i + 32], digits.members.y[i : i + 32]) for i in range(0, 128, 32)]
    with pytest.raises(FloatingPointError) as caught:  # bench.run.divergence.TrainingDiverged
        trainer.train_epoch([batches])
    assert (caught.value.step, caught.value.epoch) == (1, 0)
    honest = SplitTrainer(model=build_model(cell, digits), lr=1e-3)
    assert honest.train_epoch([batches]) > 0  # the same data trains without a flag


def test_an_attack_whose_output_is_not_finite_is_diverged_and_its_victim_kept(capsys, out, plugins):
    code, _, _ = run(capsys, out, "--attack", "nan-output")
    assert code == 0
    record = _record(out, attack="nan-output")
    assert record["status"] == "ok" and record["metrics"]["diverged"] == 1.0
    assert record["notes"]["diverged"] == "the attack's reconstructions are not finite"
    assert record["metrics"]["accuracy"] == _record(out)["metrics"]["accuracy"]  # the victim trained as before
    from bench.cli.report import load_results
    from bench.report.aggregate import aggregate, victim_view
    from bench.report.failures import failure_notes

    table = load_results(out)
    ssim = aggregate(table[table["attack"] == "nan-output"], metrics={"ssim"})
    assert (ssim["n"].tolist(), ssim["n_diverged"].tolist()) == ([0], [1])  # no leakage reported
    assert victim_view(table)["metric"].eq("accuracy").any()
    assert failure_notes(table) == ["No result for dataset digits, defense Raw, attack nan-output: every stored cell "
                                    "failed or diverged (1 diverged): the attack's reconstructions are not finite"]


def test_report_and_verify_name_a_defense_that_raised(capsys, out, plugins):
    code, _, _ = run(capsys, out, "--defense", "raw,broken-defense", "--cr", "8")
    assert code == 1
    note = ("No result for dataset digits, defense broken-defense, cr 8×, attack none: every stored cell failed or "
            "diverged (1 failed): RuntimeError: this defense is broken on purpose")
    code, table, _ = run_cli(capsys, ["report", "--results", str(out), "--table", "II"])
    assert code == 0 and note in table.splitlines()
    code, verdicts, _ = run_cli(capsys, ["verify", "--results", str(out)])
    assert code == 0 and f"note: {note}" in verdicts.splitlines()


def test_report_on_a_folder_of_failed_cells_is_one_line_with_its_paths(capsys, tmp_path):
    from bench.run.record import FAILED, CellRecord
    from bench.run.store import ResultStore

    folders = [tmp_path / "a", tmp_path / "b"]
    for seed, folder in enumerate(folders):
        cell = Cell(dataset="digits", victim="mnistnet", cut="split-2", defense="raw", profile="smoke", seed=seed)
        error = 'Traceback (most recent call last):\n  File "x.py", line 1, in f\n    g()\nValueError: seed out of range\n'
        ResultStore(folder).write(CellRecord(cell, FAILED, error=error))
    code, stdout, stderr = run_cli(capsys, ["report", *(a for f in folders for a in ("--results", str(f)))])
    line = one_error_line(stderr)
    assert code == 2 and stdout == "" and "PosixPath" not in line
    assert line == (f"error: no table has data in {folders[0]}, {folders[1]}; no result for dataset digits, defense Raw, "
                    "attack none: every stored cell failed or diverged (2 failed): ValueError: seed out of range")


def test_compare_takes_no_attack_none_and_writes_nothing(capsys, tmp_path):
    args = ["compare", "--dataset", "digits", "--profile", "smoke", "--quiet", "--defense", "topk", "--attack", "none",
            "--cr", "8", "--seeds", "0", "--baseline-results", str(tmp_path / "none"), "--out", str(tmp_path / "cmp")]
    code, stdout, stderr = run_cli(capsys, args)
    line = one_error_line(stderr)
    assert code == 2 and stdout == "" and not (tmp_path / "cmp").exists()
    assert line.startswith("error: Invalid value for --attack: 'none' runs no attack: bench compare ranks defenses")
