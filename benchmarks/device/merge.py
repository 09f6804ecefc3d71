"""Merge a pack of cell records that came back from the GPU machine into its results folders."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from pending import PendingItem
from travel import read_pack, sha256

_MEMBER = re.compile(r"^(?P<folder>.+)/(?P<kind>cells|grids)/(?P<id>[0-9a-f]{12})\.(?P<ext>json|png)$")


def merge_pack(returned: Path, items: list[PendingItem], repo: Path) -> tuple[list[str], list[Path]]:
    """Merge ``returned``'s ``cells.tar`` into the results folders of the pending grids ``items``.

    A file is merged only if its sha256 is the manifest's, it lies under the results folder of one of
    those grids, and, for a record, the cell it holds has the id its name says. A record already
    stored identically is left; one stored differently is refused, never overwritten. Each folder a
    record was merged into gets its grid file (as ``grid.toml``, where it has none) and a ``tables/``
    folder, and its tidy table is collected.

    Returns:
        One line per refused file, and the folders records were merged into.
    """
    from bench.run.grid_file import load_grid_file
    from bench.run.record import CellRecord, InvalidRecordError
    from bench.run.store import ResultStore, atomic_write_bytes

    manifest, files = read_pack(returned)
    grids = {load_grid_file(repo / item.grid).options.out: repo / item.grid for item in items if item.kind == "grid"}
    refused, touched = [], {}
    for name, data in sorted(files.items()):
        match = _MEMBER.match(name)
        if manifest.get("files", {}).get(name) != sha256(data):
            refused.append(f"{name}: its sha256 is not the manifest's")
            continue
        if match is None or match["folder"] not in grids or (match["kind"] == "cells") != (match["ext"] == "json"):
            refused.append(f"{name}: not a record or grid of a pending grid's results folder")
            continue
        if match["ext"] == "json":
            try:
                cell_id = CellRecord.from_json(json.loads(data)).cell.id
            except (ValueError, InvalidRecordError) as err:
                refused.append(f"{name}: not a cell record ({err})")
                continue
            if cell_id != match["id"]:
                refused.append(f"{name}: holds cell {cell_id}, not {match['id']}")
                continue
        target = repo / name
        if target.exists():
            if target.read_bytes() != data:
                refused.append(f"{name}: differs from the one stored here, which is kept")
            continue
        atomic_write_bytes(target, data)
        touched[match["folder"]] = grids[match["folder"]]
    for folder, grid in touched.items():
        root = repo / folder
        if not (root / "grid.toml").exists():
            shutil.copyfile(grid, root / "grid.toml")
        (root / "tables").mkdir(exist_ok=True)
        ResultStore(root).collect()
    return refused, [repo / folder for folder in touched]

