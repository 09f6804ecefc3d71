"""Leaderboard entries checked against the records they name: each must exist with the sha256 the entry holds.

A record is looked for where the entry says it was read (its ``results`` folder, relative to the
working directory where relative), then under each results folder given to the check, so that a
moved folder can be named on the command line.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from bench.site.records import file_sha256
from bench.site.schema import schema_problems

ENTRIES_DIR = "entries"


@dataclass
class EntryCheck:
    """What checking some entries found.

    Attributes:
        entries: entry files read.
        records: records named (over every entry).
        problems: one line per problem (an unreadable or invalid entry, a missing or changed record).
    """

    entries: int = 0
    records: int = 0
    problems: list[str] = field(default_factory=list)


def entry_files(folder: Path) -> list[Path]:
    """The entry files of ``folder``: a site's ``entries/`` when it has one, else the folder itself."""
    folder = Path(folder)
    inner = folder / ENTRIES_DIR
    return sorted((inner if inner.is_dir() else folder).glob("*.json"))


def check_entries(files: list[Path], *, results_dirs: list[Path] = ()) -> EntryCheck:
    """Check each entry file: valid against the schema, and every record it names present with its sha256.

    Args:
        files: entry JSON files.
        results_dirs: results folders to look in besides the one each entry names.
    """
    check = EntryCheck()
    for path in files:
        check.entries += 1
        try:
            entry = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            check.problems.append(f"unreadable entry: {path} ({type(err).__name__})")
            continue
        invalid = schema_problems(entry)
        if invalid:
            check.problems.append(f"invalid entry: {path} does not follow the entry schema ({invalid[0]})")
            continue
        for record in entry["records"]:
            check.records += 1
            problem = _record_problem(record, results_dirs)
            if problem:
                check.problems.append(f"{problem} (named by {path})")
    return check


def _record_problem(record: dict, results_dirs: list[Path]) -> str | None:
    candidates = [Path(record["results"]) / record["path"], *(Path(d) / record["path"] for d in results_dirs)]
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        return f"missing: record {record['cell_id']} is not at {candidates[0]}" + (
            f" nor under {', '.join(map(str, results_dirs))}" if results_dirs else "")
    if file_sha256(found) != record["sha256"]:
        return f"changed: {found} does not match the sha256 its entry holds"
    return None
