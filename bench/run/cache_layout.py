"""Where a results folder keeps what is only a cache: its trained victims and the snapshots of
watched runs stopped part way (light: ``bench run --dry-run`` reads it without torch)."""
from __future__ import annotations

from pathlib import Path

CACHE_FOLDER = "checkpoints"  # under the results folder: trained victims (bench.run.checkpoints)
SNAPSHOT_FOLDER = "progress"  # under the cache folder: snapshots of stopped runs (bench.run.progress)


def snapshot_file(cache_dir: Path, cell_id: str, key: str) -> Path:
    """The snapshot of cell ``cell_id`` made under ``key`` (the code and machine it holds for)."""
    return Path(cache_dir) / SNAPSHOT_FOLDER / f"{cell_id}-{key}.pt"


def snapshot_files(cache_dir: Path, cell_id: str = "*") -> list[Path]:
    """The snapshots in ``cache_dir`` of cell ``cell_id`` (default: of every cell), whatever their key."""
    return list((Path(cache_dir) / SNAPSHOT_FOLDER).glob(f"{cell_id}-*.pt"))


def stopped_cells(cache_dir: Path) -> set[str]:
    """Ids of the cells with a snapshot in ``cache_dir`` (of any code: whether it is read is decided
    when the cell runs)."""
    return {path.name.split("-", 1)[0] for path in snapshot_files(cache_dir)}
