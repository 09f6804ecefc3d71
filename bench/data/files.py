"""Data files that are there but cannot be read: every image loader decodes its files through
:func:`decode_each`, so that a broken file is named in one line at load time, and ``bench list
--check`` reports every broken file of a dataset, not only the first."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


class DataFileError(ValueError):
    """Data files that cannot be decoded (cut short, not the format their name says, ...).

    Its message is one line naming the first file, what is wrong with it, how many more there are,
    and what to do.

    Attributes:
        problems: ``(path, what is wrong)`` for every broken file found.
    """

    def __init__(self, problems: Sequence[tuple[Path, str]]) -> None:
        self.problems = [(Path(path), _one_line(why)) for path, why in problems]
        (first, why), more = self.problems[0], len(self.problems) - 1
        others = f" (and {more} more file{'s' if more != 1 else ''}: bench list --check lists them)" if more else ""
        super().__init__(f"{first} cannot be read: {why}{others}; replace it with a good copy or remove it, then rerun")

    def __reduce__(self):  # ValueError's default reduce would call __init__ with the message
        return (DataFileError, (self.problems,))


def decode_each(paths: Iterable[Path], decode: Callable[[Path], T]) -> list[T]:
    """``decode(path)`` for every path, in order.

    Raises:
        DataFileError: naming every path whose decoding raised, after trying them all.
    """
    decoded, problems = [], []
    for path in paths:
        try:
            decoded.append(decode(path))
        # Decoders report bad bytes as many unrelated types (OSError, ValueError, EOFError, SyntaxError,
        # zlib.error, pickle.UnpicklingError, KeyError, ...): each means this file cannot be read.
        except Exception as err:  # noqa: BLE001
            problems.append((path, f"{type(err).__name__}: {err}"))
    if problems:
        raise DataFileError(problems)
    return decoded


def read_all(*readers: Callable[[], T]) -> list[T]:
    """Each reader's result (e.g. a dataset's test split, then its train split), every reader run.

    Raises:
        DataFileError: naming the broken files of every reader, after running them all.
    """
    results, problems = [], []
    for reader in readers:
        try:
            results.append(reader())
        except DataFileError as err:
            problems += err.problems
    if problems:
        raise DataFileError(problems)
    return results
