"""Several results folders read as one table: which stored record of a cell a reader takes.

A cell id names a configuration, not a measurement: a cell rerun after the code changed (a reused
baseline run again in a later folder, an attack fixed since) is stored under the same id in several
folders, with different numbers. Every reader of several folders (``bench report``, ``bench verify``,
``bench site``) takes one whole record per cell id, the one written by the newest code, so that a
fixed attack's rerun replaces its older result wherever it is read, whatever order the folders are
given in.

"Newest" is the commit order of the git history that holds the folders (``git rev-list --topo-order
HEAD``), the commit read from each record's code version as
:func:`bench.run.git_describe.described_commit` reads it; a ``-dirty`` record counts as newer than its
clean commit. A record whose code is not in that history (no git, a shallow clone, a commit from
elsewhere) counts as older than every record whose code is; records of the same code, or all of
unknown code, keep the order the folders were given in.
"""
from __future__ import annotations

import math
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from bench.run.git_describe import described_commit

if TYPE_CHECKING:
    import pandas as pd


def code_recency(folders: Iterable[Path | str]) -> dict[str, int]:
    """``{commit prefix: age}`` (0 the newest) over the git histories holding ``folders``.

    Every prefix of 7 to 40 hex digits of each commit is a key, since records store the short form.
    Empty where git or the history is missing.
    """
    ages: dict[str, int] = {}
    seen: set[str] = set()
    for folder in folders:
        try:
            top = _git(folder, "rev-parse", "--show-toplevel").strip()
            if top in seen:
                continue
            seen.add(top)
            commits = _git(top, "rev-list", "--topo-order", "HEAD").split()
        except (OSError, subprocess.SubprocessError):
            continue
        for age, commit in enumerate(commits):
            for length in range(7, len(commit) + 1):
                ages.setdefault(commit[:length], age)
    return ages


def _git(folder: Path | str, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=60,
                          check=True).stdout


def record_age(code_version: object, recency: Mapping[str, int]) -> float:
    """How old the code that wrote a record is (smaller is newer); infinite where it is not known."""
    described = described_commit(code_version) if isinstance(code_version, str) else None
    age = recency.get(described[0]) if described else None
    if age is None:
        return math.inf
    return age - 0.5 if described[1] else float(age)


def combine_tables(tables: list[tuple[str, pd.DataFrame]], *,
                   recency: Mapping[str, int] | None = None) -> tuple[pd.DataFrame, dict[str, str]]:
    """One table from several results folders' tables, and the folder each cell was taken from.

    Args:
        tables: ``(results folder as given, its tidy table)`` in the order given.
        recency: ``{commit prefix: age}`` as :func:`code_recency` returns it; read from the folders'
            git history when None.

    Returns:
        The combined table, every row of each cell from one folder: the one whose record the newest
        code wrote (ties and unknown code: the first folder given), and ``{cell_id: results folder}``.
    """
    import pandas as pd

    tables = [(results, table) for results, table in tables if not table.empty]
    if not tables:
        return pd.DataFrame(), {}
    if recency is None:
        recency = code_recency(results for results, _ in tables)
    best: dict[str, tuple[float, int]] = {}
    for position, (_, table) in enumerate(tables):
        codes = table.groupby("cell_id", sort=False)["code_version"].first() if "code_version" in table \
            else pd.Series(None, index=table["cell_id"].unique(), dtype=object)
        for cell_id, code in codes.items():
            key = (record_age(code, recency), position)
            if cell_id not in best or key < best[cell_id]:
                best[cell_id] = key
    parts, source = [], {}
    for position, (results, table) in enumerate(tables):
        mine = table[table["cell_id"].map(lambda c: best[c][1] == position)]  # noqa: B023
        source.update(dict.fromkeys(mine["cell_id"].unique(), results))
        parts.append(mine)
    return pd.concat(parts, ignore_index=True), source
