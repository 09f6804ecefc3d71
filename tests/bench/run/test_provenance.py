import subprocess

import pytest

from bench.run.git_describe import describe
from bench.run.provenance import environment
from bench.run.table import NOT_FACTORS


def test_records_the_processor_and_never_makes_it_a_factor():
    info = environment()
    assert info["cpu"] and info["cpu"] != "unknown"
    assert info["cpu_capability"]  # torch's kernel family: DEFAULT, AVX2, AVX512, ...
    assert {"cpu", "cpu_capability", "machine", "torch_threads"} <= NOT_FACTORS


def _git(root, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


def _repo(root):
    (root / "results").mkdir()
    (root / "code.py").write_text("x = 1\n")
    (root / "results" / "table.csv").write_text("a\n1\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "c")
    return root


def test_a_grid_writing_its_results_leaves_the_code_version_clean(tmp_path):
    root = _repo(tmp_path)
    clean = describe(root)
    (root / "results" / "table.csv").write_text("a\n2\n")
    (root / "results" / "new_cell.json").write_text("{}")
    (root / "notes.txt").write_text("untracked")
    assert describe(root) == clean and not clean.endswith("-dirty")


def test_a_changed_source_file_marks_the_code_version_dirty(tmp_path):
    root = _repo(tmp_path)
    clean = describe(root)
    (root / "code.py").write_text("x = 2\n")
    assert describe(root) == f"{clean}-dirty"


def test_a_tree_without_git_history_raises(tmp_path):
    with pytest.raises(subprocess.SubprocessError):
        describe(tmp_path)
