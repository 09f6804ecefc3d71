"""The leaderboard entry's JSON Schema (``entry.schema.json``, shipped with the package) and its validation."""
from __future__ import annotations

import json
from functools import cache
from importlib import resources

SCHEMA_FILE = "entry.schema.json"
SCHEMA_VERSION = "3.5"


@cache
def entry_schema() -> dict:
    """The schema as shipped in :mod:`bench.site` (read once)."""
    return json.loads(resources.files("bench.site").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))


def schema_problems(entry: object) -> list[str]:
    """Every way ``entry`` breaks the schema, one line each (``at <path>: <message>``); empty when valid."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(entry_schema())
    problems = sorted(validator.iter_errors(entry), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in problems]
