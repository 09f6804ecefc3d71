"""The device kit rehearsed end to end on the CPU: prepare a smoke grid's travel folder, run it with
--device cpu into a folder standing in for $OUT, collect what came back into a results folder that
lacks it; and collect refuses a record whose checksum, cell id or folder does not match."""
from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KIT = REPO / "benchmarks" / "device" / "kit.py"
SHARED = REPO.parent / "shared" / "data"

pytestmark = [pytest.mark.skipif(not (SHARED / "mnist").is_dir(), reason="needs ../shared/data/mnist"),
              pytest.mark.xdist_group("device-kit")]


def kit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(KIT), *map(str, args)], capture_output=True, text=True, cwd=REPO, timeout=600)


def kit_here(*args: str) -> subprocess.CompletedProcess:
    """``kit.py ARGS`` run in this process, whose interpreter has torch and the suite loaded already (a
    process of its own spends about 5 CPU-s on them); its output captured as :func:`kit` captures it."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = kit_module().main(list(map(str, args)))
    return subprocess.CompletedProcess([str(KIT), *map(str, args)], code, out.getvalue(), err.getvalue())


def kit_module():
    spec = importlib.util.spec_from_file_location("device_kit", KIT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def collect_here(returned: Path, pending: Path, monkeypatch, capsys) -> tuple[int, list, str]:
    """``kit.py collect`` in this process, with the regeneration it starts recorded instead of run
    (results/regenerate.sh is the project's own, run on every results folder)."""
    module = kit_module()
    started = []
    monkeypatch.setattr(module.subprocess, "run", lambda cmd, **kw: started.append(cmd) or subprocess.CompletedProcess(cmd, 0))
    code = module.main(["collect", str(returned), "--pending", str(pending)])
    return code, started, capsys.readouterr().err


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    root = tmp_path_factory.mktemp("kit")
    grid, pending = root / "grid.toml", root / "pending.toml"
    grid.write_text(f'out = "{root}/results/rehearsal"\n[defaults]\ndataset = "mnist"\nprofile = "smoke"\nseeds = [0]\n'
                    '[[grid]]\ndefense = "lightsplit-f"\nattack = "decoder-ref"\nknobs = { cr = 8 }\n')
    pending.write_text('[[pending]]\nname = "gpu-tests"\nkind = "tests"\ngpu_minutes = 1\n'
                       'paths = ["tests/bench/run/test_placement.py"]\n'
                       f'[[pending]]\nname = "smoke"\nkind = "grid"\ngrid = "{grid}"\njobs = 1\ngpu_minutes = 1\n')
    prepared = kit_here("prepare", "--pending", pending, "--travel", root / "travel", "--no-wheels")  # run: the script itself
    ran = kit("run", "--travel", root / "travel", "--out", root / "OUT", "--device", "cpu", "--no-install", "--budget", "240")
    stored = root / "results" / "rehearsal"
    shutil.move(stored, root / "gpu-side")  # the developer's tree has none of it yet
    return root, prepared, ran


def test_prepare_packs_the_grids_data_and_the_lpips_trunk_and_checks_the_size(rehearsal):
    root, prepared, _ = rehearsal
    assert prepared.returncode == 0, prepared.stderr
    with tarfile.open(root / "travel" / "data.tar.gz") as tar:
        tops = {name.split("/")[0] for name in tar.getnames()}
    assert tops == {"mnist", "lpips"}
    assert "of 64 MiB" in prepared.stdout and "carry" in prepared.stdout


def test_run_packs_every_new_record_with_its_checksum(rehearsal):
    root, _, ran = rehearsal
    assert ran.returncode == 0, ran.stdout + ran.stderr
    manifest = json.loads((root / "OUT" / "manifest.json").read_text())
    records = sorted(Path(name).name for name in manifest["files"] if name.endswith(".json"))
    assert records == sorted(p.name for p in (root / "gpu-side" / "cells").glob("*.json")) and manifest["device"] == "cpu"
    assert len(records) == 2  # the decoder on LightSplit-F and on its matched Raw
    # pytest -m gpu ran on the item's paths (a light file here: it holds no GPU test, so all are deselected)
    assert "deselected" in (root / "OUT" / "tests.txt").read_text()


def test_collect_merges_them_byte_for_byte_and_regenerates_the_folder(rehearsal, monkeypatch, capsys):
    root = rehearsal[0]
    code, started, err = collect_here(root / "OUT", root / "pending.toml", monkeypatch, capsys)
    assert code == 0, err
    merged, original = root / "results" / "rehearsal", root / "gpu-side"
    assert started == [["bash", str(REPO / "results" / "regenerate.sh"), str(merged)]]
    assert sorted(p.name for p in (merged / "cells").glob("*.json")) == sorted(p.name for p in (original / "cells").glob("*.json"))
    assert all((merged / "cells" / p.name).read_bytes() == p.read_bytes() for p in (original / "cells").glob("*.json"))
    assert (merged / "grid.toml").read_text() == (root / "grid.toml").read_text() and (merged / "tables").is_dir()
    assert (merged / "results.parquet").exists()  # the folder's table, collected: what regenerate.sh reads


def _tampered(returned: Path, into: Path, change) -> Path:
    """A copy of the returned pack with ``change(files, manifest)`` applied."""
    into.mkdir()
    manifest = json.loads((returned / "manifest.json").read_text())
    with tarfile.open(returned / "cells.tar") as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    change(files, manifest)
    with tarfile.open(into / "cells.tar", "w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (into / "manifest.json").write_text(json.dumps(manifest))
    return into


def test_collect_refuses_a_record_that_does_not_match(rehearsal, tmp_path, monkeypatch, capsys):
    import hashlib

    root = rehearsal[0]
    shutil.rmtree(root / "results" / "rehearsal")
    returned = len(list((root / "gpu-side" / "cells").glob("*.json")))
    record = next(name for name in json.loads((root / "OUT" / "manifest.json").read_text())["files"] if name.endswith(".json"))

    def corrupt(files, manifest):
        files[record] = files[record].replace(b'"ok"', b'"ok" ', 1)  # its sha256 no longer matches

    def renamed(files, manifest):
        other = record.replace(Path(record).stem, "0" * 12)  # a record filed under another cell's id
        files[other] = files.pop(record)
        manifest["files"][other] = hashlib.sha256(files[other]).hexdigest()

    def elsewhere(files, manifest):
        outside = f"{root}/results/not-pending/cells/{Path(record).name}"
        files[outside] = files.pop(record)
        manifest["files"][outside] = hashlib.sha256(files[outside]).hexdigest()

    for n, (change, message) in enumerate([(corrupt, "sha256"), (renamed, "holds cell"), (elsewhere, "not a record or grid")]):
        code, _, err = collect_here(_tampered(root / "OUT", tmp_path / str(n), change), root / "pending.toml", monkeypatch, capsys)
        assert code == 1 and message in err
        assert not (root / "results" / "rehearsal" / "cells" / Path(record).name).exists()  # the rest merged, not it
        assert len(list((root / "results" / "rehearsal" / "cells").glob("*.json"))) == returned - 1
        shutil.rmtree(root / "results" / "rehearsal")
