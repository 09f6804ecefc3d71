"""The errors every command turns into one ``error: <message>`` line: :class:`GridError` (bad input,
exit status 2) and :class:`StorageError` (a results folder that cannot be locked or written: exit
status 2 when nothing ran, 1 after part of the grid ran)."""
from __future__ import annotations

import errno

NOTHING_RAN, PARTIAL_WORK = 2, 1  # the exit statuses of a StorageError
_FULL = (errno.ENOSPC, errno.EDQUOT)


class GridError(ValueError):
    """An invalid choice on the command line or in a grid; its message is one line naming the problem."""


class MissingExtraError(GridError):
    """A part of the grid needs an optional package that is not installed (``pip install 'splitbench[text]'``)."""


class StorageError(Exception):
    """A results folder that cannot be locked or written (read-only, full disk, ...).

    Its message is one line: the path, what is wrong, what became of the run's cells, and what to do.

    Attributes:
        exit_code: :data:`NOTHING_RAN` (2) or :data:`PARTIAL_WORK` (1).
    """

    def __init__(self, message: str, *, exit_code: int = NOTHING_RAN) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def storage_error(path, err: OSError, outcome: str, *, exit_code: int = NOTHING_RAN, folder=None) -> StorageError:
    """The :class:`StorageError` of ``err`` raised while writing ``path``.

    Args:
        path: the file or folder that could not be written.
        err: the operating system's error.
        outcome: what became of the run's cells, e.g. ``"nothing ran and no stored cell was touched"``.
        exit_code: :data:`NOTHING_RAN` or :data:`PARTIAL_WORK`.
        folder: the results folder the advice names (default: ``path``'s parent).
    """
    folder = folder if folder is not None else _parent(path)
    what = err.strerror or type(err).__name__
    if err.errno in _FULL:
        advice = f"free space on the disk of {folder} (or pass another --out), then rerun the same command"
    else:
        advice = f"make {folder} writable (or pass another --out), then rerun the same command"
    return StorageError(f"cannot write {path} ({what}): {outcome}; {advice}", exit_code=exit_code)


def _parent(path) -> str:
    from pathlib import Path

    return str(Path(path).parent)
