"""The code version a record stores: ``git describe`` of the tree, and the commit read back from it.

Torch-free: the readers of stored results (``bench report``, ``bench verify``) parse it without
loading torch.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

# What a grid writes (cells, tables, figures): a tree whose only changes lie here runs committed code.
OUTPUTS = "results"
DIRTY = "-dirty"  # the suffix of a code version whose tree had uncommitted changes
_COMMIT = re.compile(r"(?:^|-g)([0-9a-f]{7,40})$")  # `git describe`: the bare hash, or TAG-N-g<hash>


def describe(root: Path) -> str:
    """``git describe`` of the tree at ``root``, ``-dirty`` when a tracked file outside
    :data:`OUTPUTS` has uncommitted changes (a grid's own writes, such as its folder's collected
    table, leave the code it ran as committed).

    Raises:
        subprocess.SubprocessError: ``root`` is not in a git work tree, or git failed.
    """
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()

    head = git("describe", "--always", "--abbrev=12")
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", f":(exclude){OUTPUTS}")
    return f"{head}{DIRTY}" if changed else head


def described_commit(code_version: str) -> tuple[str, bool] | None:
    """The abbreviated commit hash a code version (as :func:`describe` writes it) names, and whether its
    tree was dirty; None for a version that names no commit (the package version, or a bare tag name).
    """
    base = code_version.removesuffix(DIRTY)
    match = _COMMIT.search(base)
    return (match.group(1), base != code_version) if match else None
