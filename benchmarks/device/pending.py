"""The pending GPU work (``benchmarks/device/pending.toml``): what a borrowed GPU runs, in priority order."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import tomllib
from commands import REPO

KINDS = ("tests", "grid", "utilisation")
PENDING = Path(__file__).resolve().parent / "pending.toml"


class PendingError(ValueError):
    """A pending file that cannot be read; the message is one line naming the item and the problem."""


@dataclass(frozen=True)
class PendingItem:
    """One item of pending GPU work.

    Attributes:
        name: short name (``--only`` picks items by it).
        kind: ``tests`` (the GPU-marked tests), ``grid`` (a grid file run on the GPU) or
            ``utilisation`` (GPU use and cells per minute against concurrent workers, on a grid's cells).
        gpu_minutes: the expected device time of the whole item.
        why: what the item is for.
        grid: the grid file (``grid`` and ``utilisation``), relative to the repository root.
        jobs: workers on the GPU (``grid``).
        workers: the worker counts tried (``utilisation``).
        seconds_each: how long each worker count runs (``utilisation``).
        paths: where pytest looks for the GPU-marked tests (``tests``).
    """

    name: str
    kind: str
    gpu_minutes: float
    why: str = ""
    grid: str | None = None
    jobs: int = 8
    workers: tuple[int, ...] = (1, 4, 8, 16)
    seconds_each: float = 45.0
    paths: tuple[str, ...] = ("tests",)


def read_pending(path: Path = PENDING, only: tuple[str, ...] = ()) -> list[PendingItem]:
    """The items of ``path`` in file order (just those named in ``only``, when given).

    Raises:
        PendingError: an unreadable file, an unknown key or kind, a missing grid file, or an unknown name in ``only``.
    """
    try:
        data = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise PendingError(f"{path}: cannot be read ({' '.join(str(err).split())})") from None
    items = []
    known = set(PendingItem.__dataclass_fields__)
    for number, raw in enumerate(data.get("pending", []), start=1):
        where = f"{path}: [[pending]] {number}"
        unknown = sorted(set(raw) - known)
        if unknown:
            raise PendingError(f"{where}: unknown key '{unknown[0]}' (known: {', '.join(sorted(known))})")
        try:
            item = PendingItem(**{**raw, "workers": tuple(raw.get("workers", PendingItem.workers)),
                                  "paths": tuple(raw.get("paths", PendingItem.paths))})
        except TypeError as err:
            raise PendingError(f"{where}: {err}") from None
        if item.kind not in KINDS:
            raise PendingError(f"{where}: kind '{item.kind}' is not one of {', '.join(KINDS)}")
        if item.kind != "tests" and (item.grid is None or not (REPO / item.grid).is_file()):
            raise PendingError(f"{where}: grid file '{item.grid}' not found (paths are relative to the repository root)")
        if item.gpu_minutes <= 0 or item.jobs < 1 or not item.workers or min(item.workers) < 1:
            raise PendingError(f"{where}: gpu_minutes, jobs and workers must be positive")
        items.append(item)
    names = [item.name for item in items]
    if len(set(names)) != len(names):
        raise PendingError(f"{path}: two items share a name")
    missing = [name for name in only if name not in names]
    if missing:
        raise PendingError(f"{path}: no pending item '{missing[0]}' (known: {', '.join(names)})")
    return [item for item in items if not only or item.name in only]
