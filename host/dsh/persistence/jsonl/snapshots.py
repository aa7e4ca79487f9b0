"""`SnapshotFile`: a small file of lines, appended to, replaced whole by a snapshot.

The wake index and the attention file are each one file beside the logs,
kept the same way:

- `replace(payload)` writes a snapshot atomically: a hidden temp file in the
  same directory (mode 0600), fsync, rename over the file, fsync the
  directory; the snapshot's descriptor appends from then on;
- `append(payload)` writes lines with one write and one fsync. A write that
  fails may have left part of itself: the file is marked torn and cut back
  to its last good size before the next append;
- `adopt(fd, lines, valid)` takes over a descriptor its owner opened and
  parsed (`valid`: the size of its complete lines; anything after is a torn
  tail, cut before the next append).

Each method raises `OSError` and leaves what it reports consistent; its
owner words the error (a `StorageError`, a `WakeBackendError`). Not
thread-safe: the owner calls it from one worker thread at a time.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from .files import FILE_MODE, Sync, sync_directory, write_all

__all__ = ["SnapshotFile"]


class SnapshotFile:
    """One file of lines at `path` (see the module docstring)."""

    def __init__(self, path: Path, sync: Sync) -> None:
        self.path = path
        self._sync = sync
        self._fd: int | None = None
        self.lines = 0  # lines in the file now, header included
        self._valid_size = 0
        self._torn = False

    @property
    def is_open(self) -> bool:
        return self._fd is not None

    def adopt(self, fd: int, lines: int, valid: int) -> None:
        """Append to `fd` from now on: `lines` complete lines, `valid` bytes of them."""
        self.close()
        self._fd, self.lines, self._valid_size = fd, lines, valid
        self._torn = os.fstat(fd).st_size != valid

    def append(self, payload: bytes) -> None:
        """Append `payload` (whole lines) with one write and one fsync."""
        fd = self._fd
        assert fd is not None, "append before adopt or replace"
        try:
            if self._torn:
                os.ftruncate(fd, self._valid_size)
                self._torn = False
            write_all(fd, payload)
            self._sync(fd)
        except OSError:
            self._torn = True  # a part may be there: cut it before the next append
            raise
        self.lines += payload.count(b"\n")
        self._valid_size += len(payload)

    def replace(self, payload: bytes) -> None:
        """Make the file exactly `payload`, atomically, and append to it from now on."""
        directory = self.path.parent
        temp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(6)}.tmp")
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
            fd = os.open(temp, flags, FILE_MODE)
            try:
                write_all(fd, payload)
                self._sync(fd)
                os.replace(temp, self.path)
                sync_directory(directory, self._sync)
            except BaseException:
                os.close(fd)
                raise
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        self.close()
        self._fd, self.lines = fd, payload.count(b"\n")
        self._valid_size, self._torn = len(payload), False

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
