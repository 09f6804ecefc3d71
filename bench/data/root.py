"""Where datasets live on disk, and the one error every loader raises when they are not there.

The data root is resolved once (``--data-root``, then ``BENCH_DATA_ROOT``, then the user cache) and
handed to each loader. A loader accepts two conventions for its sub-folder, so that both
``--data-root ../shared/data/mnist`` and ``--data-root ../shared/data`` find ``MNIST/raw``:
``<root>/<sub>`` and ``<root>/<dataset-name>/<sub>`` (see :func:`find_dataset_dir`).

Downloads are best effort: :func:`try_download` runs a download with a short socket timeout and
turns any failure into a one-line reason, which the loader puts into its :class:`MissingDataError`.
"""
from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "BENCH_DATA_ROOT"
DOWNLOAD_TIMEOUT_S = 10.0
_MAX_REASON_CHARS = 200


def default_cache_root() -> Path:
    """``$XDG_CACHE_HOME/splitbench/data``, else ``~/.cache/splitbench/data``."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "splitbench" / "data"


def resolve_data_root(cli_value: str | None) -> Path:
    """The folder datasets are looked up under.

    Args:
        cli_value: the ``--data-root`` option, or ``None`` when it was not given.

    Returns:
        ``cli_value`` if given, else ``$BENCH_DATA_ROOT`` if set and non-empty, else
        :func:`default_cache_root`. ``~`` is expanded; the folder need not exist.
    """
    if cli_value:
        return Path(cli_value).expanduser()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    return default_cache_root()


def _one_line(text: str) -> str:
    return re.sub(r"\s*[\r\n]+\s*", " ", text).strip()


class MissingDataError(FileNotFoundError):
    """A dataset's files are not under the data root (and could not be downloaded).

    The message is a single line naming the dataset, the files expected and where to put them, e.g.
    ``mnist: no data under /x; place t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz (and
    optionally the train-* files) in /x/MNIST/raw/ or pass --data-root``.

    Args:
        dataset: registry name of the dataset.
        root: the data root that was searched.
        expected: the files (or folders) that must be present.
        place_in: the folder they belong in.
        optional: files that may be added, described in words (``"the train-* files"``).
        reason: why a download did not help (``"download failed: URLError ..."``), or ``""``.
    """

    def __init__(
        self,
        dataset: str,
        root: Path | str,
        expected: Sequence[str],
        place_in: Path | str,
        *,
        optional: str = "",
        reason: str = "",
    ) -> None:
        self.dataset = dataset
        self.root = Path(root)
        self.expected = tuple(expected)
        self.place_in = Path(place_in)
        self.optional = optional
        self.reason = reason
        message = f"{dataset}: no data under {self.root}"
        if reason:
            message += f" ({reason[:_MAX_REASON_CHARS]})"
        message += f"; place {', '.join(self.expected)}"
        if optional:
            message += f" (and optionally {optional})"
        message += f" in {self.place_in}/ or pass --data-root"
        super().__init__(_one_line(message))

    def __reduce__(self):  # OSError's default reduce would call __init__ with the message alone
        args = (self.dataset, self.root, self.expected, self.place_in)
        return (_rebuild_missing, (args, self.optional, self.reason))


def _rebuild_missing(args: tuple, optional: str, reason: str) -> MissingDataError:
    return MissingDataError(*args, optional=optional, reason=reason)


def find_dataset_dir(
    root: Path, candidates: Sequence[str], *, must_contain: Sequence[str] = ()
) -> Path | None:
    """The first ``root / candidate`` folder that exists and holds everything in ``must_contain``.

    Args:
        root: the data root.
        candidates: sub-paths to try in order; a loader passes ``[sub, f"{name}/{sub}"]``.
        must_contain: glob patterns (relative to the candidate) that must each match something,
            e.g. ``["t10k-images-idx3-ubyte*"]``.

    Returns:
        The matching folder, or ``None``.
    """
    for candidate in candidates:
        folder = Path(root) / candidate
        if folder.is_dir() and all(any(folder.glob(pattern)) for pattern in must_contain):
            return folder
    return None


@dataclass(frozen=True)
class DatasetLayout:
    """Where a loader looks for a dataset: sub-folders of the data root, tried in order, and the
    files (glob patterns) that must sit in one of them."""

    candidates: tuple[str, ...]
    must_contain: tuple[str, ...]

    def find(self, root: Path) -> Path | None:
        """The first candidate folder under ``root`` holding every required file, or ``None``."""
        return find_dataset_dir(root, self.candidates, must_contain=self.must_contain)


def try_download(
    action: Callable[[], object], *, timeout: float = DOWNLOAD_TIMEOUT_S
) -> str | None:
    """Run a download, never letting a failure escape.

    The process-wide socket timeout is set for the duration because torchvision's downloader opens
    its URLs without one; it is restored afterwards.

    Args:
        action: the download (a torchvision constructor with ``download=True``, a urllib fetch).
        timeout: socket timeout in seconds.

    Returns:
        ``None`` on success, else a one-line reason such as ``"download failed: URLError: ..."``.
    """
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(timeout)
    try:
        action()
    # Network, HTTP, checksum and archive errors surface as many unrelated types (URLError,
    # RuntimeError, BadZipFile, EOFError, ...); all of them mean "the data is still not there".
    except Exception as exc:  # noqa: BLE001
        return _one_line(f"download failed: {type(exc).__name__}: {exc}")[:_MAX_REASON_CHARS]
    finally:
        socket.setdefaulttimeout(previous)
    return None
