"""A watched run stopped part way resumes from its last epoch's snapshot with the same numbers."""
import dataclasses
import io
import pickle

import pytest
import torch

from attacks.sdar import SDAR
from bench.knobs import REQUIRED
from bench.run import progress
from bench.run.attack_cell import run_attack_cell
from bench.run.attacker_views import build_view
from bench.run.cache_layout import SNAPSHOT_FOLDER
from bench.run.training import build_model, train_victim
from defenses import DEFENSES, PAYLOAD_TRANSFORMS
from tests.attacks.test_sdar import PROFILE, make_cell, pre_training_attack
from tests.defenses.knob_values import smoke_knobs

THREE_EPOCHS = dataclasses.replace(PROFILE, epochs=3)  # 4 steps an epoch on the smoke carve


class Stopped(Exception):
    """Stands for a killed worker: raised from inside a step, after some epochs were snapshotted."""


def _watched_run(cell, data, cache_dir, *, stop_in_epoch=None, monkeypatch=None):
    """Train ``cell``'s victim with a fresh SDAR watching; returns the victim and the attack, or
    raises :class:`Stopped` at the second step of epoch ``stop_in_epoch``."""
    attack = pre_training_attack(cell, data)
    if stop_in_epoch is not None:
        real = SDAR.on_step

        def stopping(self, view):
            if view.epoch == stop_in_epoch and self.steps_seen == 4 * stop_in_epoch + 1:
                raise Stopped
            real(self, view)

        monkeypatch.setattr(SDAR, "on_step", stopping)
    try:
        trained = train_victim(cell, data=data, profile=THREE_EPOCHS, cache_dir=cache_dir, observers=[attack])
    finally:
        if monkeypatch is not None:
            monkeypatch.undo()
    trained.random_after = torch.get_rng_state()  # where the run left the global stream
    return trained, attack


def _decoded(cell, data, trained, attack):
    with torch.random.fork_rng():
        torch.manual_seed(1)  # the targets' DP noise: the same draws for both runs
        view, _ = build_view(cell=cell, model=trained.model, data=data, client_indices=trained.client_indices,
                             granted=SDAR.requires, n_targets=PROFILE.targets)
        attack.update_view(view)
        return attack.run()


def _untimed_scores(output):
    return {k: v for k, v in output.scores.items() if not k.endswith("_ms")}


def _untimed(history):
    return {k: v for k, v in history.items() if k not in ("ms", "cpu_ms")}


def _snapshots(cache_dir):
    return list((cache_dir / SNAPSHOT_FOLDER).glob("*.pt"))


@pytest.mark.parametrize("defense, params", [("raw", {}), ("lightsplit-f+dp", {"cr": 8.0, "sigma": 0.02})])
def test_a_run_stopped_part_way_resumes_at_its_last_epoch_with_the_same_numbers(digits, tmp_path, monkeypatch,
                                                                                  defense, params):
    cell = make_cell(defense, **params)
    straight, straight_attack = _watched_run(cell, digits, tmp_path / "straight")
    with pytest.raises(Stopped):
        _watched_run(cell, digits, tmp_path / "stopped", stop_in_epoch=2, monkeypatch=monkeypatch)
    assert len(_snapshots(tmp_path / "stopped")) == 1  # written after epochs 1 and 2, one file
    resumed, resumed_attack = _watched_run(cell, digits, tmp_path / "stopped")

    assert resumed.resumed is not None and resumed.resumed.epochs == 2
    assert straight.resumed is None
    assert _snapshots(tmp_path / "stopped") == [] and _snapshots(tmp_path / "straight") == []
    for key, value in straight.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[key]), key
    untimed = lambda m: {k: v for k, v in m.items() if k != "train_seconds"}  # noqa: E731
    assert untimed(resumed.metrics) == untimed(straight.metrics)
    assert _untimed(resumed_attack.history) == _untimed(straight_attack.history)
    assert len(resumed_attack.history["ms"]) == len(straight_attack.history["ms"])
    a, b = _decoded(cell, digits, straight, straight_attack), _decoded(cell, digits, resumed, resumed_attack)
    assert torch.equal(resumed.random_after, straight.random_after)
    assert torch.equal(a.reconstructions, b.reconstructions)
    assert _untimed_scores(a) == _untimed_scores(b)


def test_a_damaged_snapshot_is_deleted_with_one_line_and_the_run_starts_afresh(digits, tmp_path, monkeypatch, capsys):
    cell = make_cell()
    straight, _ = _watched_run(cell, digits, tmp_path / "straight")
    with pytest.raises(Stopped):
        _watched_run(cell, digits, tmp_path / "stopped", stop_in_epoch=1, monkeypatch=monkeypatch)
    (snapshot,) = _snapshots(tmp_path / "stopped")
    snapshot.write_bytes(snapshot.read_bytes()[:1000])
    capsys.readouterr()
    again, _ = _watched_run(cell, digits, tmp_path / "stopped")
    err = capsys.readouterr().err
    assert again.resumed is None
    assert err.count("\n") == 1 and "progress snapshot" in err and "unusable" in err
    assert torch.equal(again.model.head_of(0)[0].weight, straight.model.head_of(0)[0].weight)


def test_a_finished_run_deletes_its_cells_snapshots_of_older_code_too(digits, tmp_path):
    cell, other = make_cell(), make_cell("lightsplit-f", cr=8.0)
    folder = tmp_path / SNAPSHOT_FOLDER
    folder.mkdir()
    (folder / f"{cell.id}-0123456789ab.pt").write_bytes(b"older code")
    (folder / f"{other.id}-0123456789ab.pt").write_bytes(b"another cell")
    _watched_run(cell, digits, tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == [f"{other.id}-0123456789ab.pt"]


def test_another_cells_snapshot_is_not_taken(digits, tmp_path, monkeypatch, capsys):
    cell, other = make_cell(), make_cell("lightsplit-f", cr=8.0)
    with pytest.raises(Stopped):
        _watched_run(other, digits, tmp_path, stop_in_epoch=1, monkeypatch=monkeypatch)
    (foreign,) = _snapshots(tmp_path)
    model = build_model(cell, digits)
    foreign.rename(progress.progress_path(cell, model, [pre_training_attack(cell, digits)], tmp_path))
    capsys.readouterr()
    again, _ = _watched_run(cell, digits, tmp_path)
    assert again.resumed is None and "belongs to cell" in capsys.readouterr().err


def test_the_snapshot_path_follows_the_cell_and_the_attacks_code(digits, tmp_path, monkeypatch):
    cell = make_cell()
    attack = pre_training_attack(cell, digits)
    model = build_model(cell, digits)
    path = progress.progress_path(cell, model, [attack], tmp_path)
    assert path.parent == tmp_path / SNAPSHOT_FOLDER and path.name.startswith(cell.id)
    assert progress.progress_path(make_cell("lightsplit-f", cr=8.0), model, [attack], tmp_path) != path
    paths = []
    for text in ("x = 1\n", "x = 2\n"):
        source = tmp_path / text[4] / "sdar.py"
        source.parent.mkdir()
        source.write_text(text)
        monkeypatch.setattr(progress, "source_files", lambda classes, source=source: {source})
        paths.append(progress.progress_path(cell, model, [attack], tmp_path))
    assert paths[0] != paths[1]


def test_a_snapshot_is_not_read_on_another_kind_of_machine(digits, tmp_path, monkeypatch):
    cell = make_cell()
    attack, model = pre_training_attack(cell, digits), build_model(cell, digits)
    here = progress.progress_path(cell, model, [attack], tmp_path)
    env = progress.environment()
    for change in ({"cpu": "another processor"}, {"version_torch": "0.0"}, {"cpu_capability": "AVX2"}):
        monkeypatch.setattr(progress, "environment", lambda change=change: {**env, **change})
        assert progress.progress_path(cell, model, [attack], tmp_path) != here, change
    monkeypatch.setattr(progress, "environment", lambda: {**env, "code_version": "another commit"})
    assert progress.progress_path(cell, model, [attack], tmp_path) == here  # the code's own files decide
    monkeypatch.undo()
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(threads + 1)
        assert progress.progress_path(cell, model, [attack], tmp_path) != here
    finally:
        torch.set_num_threads(threads)


def test_a_snapshot_that_cannot_be_written_is_one_line_and_the_run_goes_on(digits, tmp_path, capsys):
    cell = make_cell()
    straight, _ = _watched_run(cell, digits, tmp_path / "straight")
    attack = pre_training_attack(cell, digits)
    attack.unpicklable = lambda: None
    capsys.readouterr()
    trained = train_victim(cell, data=digits, profile=THREE_EPOCHS, cache_dir=tmp_path / "odd", observers=[attack])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "could not be written" in err  # once, not at every epoch's end
    assert trained.metrics["accuracy"] == straight.metrics["accuracy"]
    assert _snapshots(tmp_path / "odd") == []


@pytest.mark.parametrize("defense", DEFENSES.names() + PAYLOAD_TRANSFORMS.names() + ["lightsplit-f+dp", "topk+dp"])
def test_sdars_state_pickles_under_every_defense(digits, defense):
    cell = make_cell(defense, **smoke_knobs(defense, cr=8.0, width=64))
    state = pre_training_attack(cell, digits).progress_state()
    assert "view" not in state
    torch.save(state, io.BytesIO())


def test_the_required_marker_pickles_as_itself():
    assert pickle.loads(pickle.dumps(REQUIRED)) is REQUIRED
    assert repr(REQUIRED) == "REQUIRED"


def test_the_cell_of_a_resumed_run_records_where_it_resumed_and_the_same_scores(digits, tmp_path, monkeypatch):
    cell = make_cell()
    straight, _ = run_attack_cell(cell, data=digits, profile=THREE_EPOCHS, cache_dir=tmp_path / "a", artifacts_dir=None)
    real = SDAR.on_step

    def stopping(self, view):
        if view.epoch == 1 and self.steps_seen == 6:
            raise Stopped
        real(self, view)

    monkeypatch.setattr(SDAR, "on_step", stopping)
    with pytest.raises(Stopped):
        run_attack_cell(cell, data=digits, profile=THREE_EPOCHS, cache_dir=tmp_path / "b", artifacts_dir=None)
    monkeypatch.undo()
    resumed, notes = run_attack_cell(cell, data=digits, profile=THREE_EPOCHS, cache_dir=tmp_path / "b", artifacts_dir=None)
    assert resumed.pop("resumed_at_epoch") == 1.0 and "resumed_at_epoch" in notes
    earlier = resumed.pop(progress.RESUMED_SECONDS)
    assert 0 < earlier < resumed["attack_seconds"] and progress.RESUMED_SECONDS in notes
    timed = {"train_seconds", "attack_seconds", "sdar_step_ms", "sdar_step_cpu_ms"}
    assert {k: v for k, v in resumed.items() if k not in timed} == {k: v for k, v in straight.items() if k not in timed}
    assert "resumed_at_epoch" not in straight
