"""The lock one run holds on a results folder, so that two runs never write the same records."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

from bench.errors import storage_error


class StoreBusyError(RuntimeError):
    """Another process holds the store's lock."""


class StoreLock:
    """An exclusive, non-blocking lock on ``root/.lock`` (``flock``), held by one run at a time.

    The file is removed on release; a holder that dies leaves it, and the operating system frees its
    lock all the same.

    Raises:
        StoreBusyError: on entering, when another process holds it.
        bench.errors.StorageError: on entering, when the folder or its lock file cannot be created
            (a read-only folder or disk, a full disk): nothing has run.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.path = self.root / ".lock"
        self._fd: int | None = None

    def __enter__(self) -> StoreLock:
        try:
            self._lock()
        except OSError as err:
            self.__exit__()  # a lock taken before the failure is released, its file removed
            exists = self.root.is_dir()
            raise storage_error(self.path if exists else self.root, err, "nothing ran and no stored cell was touched",
                                folder=self.root if exists else self.root.parent) from None
        return self

    def _lock(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise StoreBusyError(f"another bench run is using {self.root} (pid {holder})") from None
            if self._is_the_file(fd):
                break
            os.close(fd)  # its holder removed the file between our open and our lock: lock the new one
        self._fd = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())

    def _is_the_file(self, fd: int) -> bool:
        try:
            return os.stat(self.path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            return False

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            self.path.unlink(missing_ok=True)  # while still held, so no one locks a removed file
            os.close(self._fd)
            self._fd = None
