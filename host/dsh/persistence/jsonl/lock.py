"""One writing process per data directory: an exclusive `flock` on `<data-dir>/lock`.

`dsh web` holds `DataDirLock(data_dir)` for its whole life. A second one on
the same data dir finds it held and stops before it writes anything, with
one line naming the data dir and the PID of the holder (DESIGN §4, public):

    the data dir /home/me/.local/share/dsh is in use by another dsh web (PID 4242)

Before it takes the lock (and creates anything), the data dir is checked to
be ours (`datadir.check_data_dir`): a data dir another user owns or could
change is refused with `UnsafeDataDir`.

The lock is the kernel's, so it goes away with the holder however it dies
(SIGKILL included): a stale `lock` file never blocks anyone. The file holds
the holder's PID as text, for that message only. Read-only commands
(`dsh sessions …`) take no lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from ..datadir import check_data_dir
from ..errors import DataDirBusy, StorageError
from .files import DIRECTORY_MODE, FILE_MODE

__all__ = ["DataDirBusy", "DataDirLock"]

LOCK_NAME = "lock"
# The holder writes its PID right after taking the lock; a loser that looks in
# between waits this long for it before saying the PID is unknown.
_PID_PATIENCE = 1.0


class DataDirLock:
    """The exclusive lock of one data directory (a context manager; see the module docstring).

    `acquire()` raises `UnsafeDataDir` for a data dir that is not ours,
    `DataDirBusy` if another process holds it and `StorageError` if the lock
    file cannot be made.
    """

    def __init__(self, data_dir: Path | str) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        if self._fd is not None:
            return
        try:
            check_data_dir(self.data_dir)
            self.data_dir.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
            flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
            fd = os.open(self.path, flags, FILE_MODE)
        except OSError as error:
            raise StorageError(f"cannot lock the data dir {self.data_dir}: {error}") from error
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise DataDirBusy(self.data_dir, _holder(self.path)) from None
            raise StorageError(f"cannot lock the data dir {self.data_dir}: {error}") from error
        with contextlib.suppress(OSError):  # the PID is only for a second process's message
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)  # closing the last descriptor drops the flock

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _holder(path: Path) -> int | None:
    """The PID written in the lock file, waiting briefly for a holder that just took it."""
    deadline = time.monotonic() + _PID_PATIENCE
    while True:
        try:
            text = path.read_text(encoding="ascii", errors="replace").strip()
        except OSError:
            text = ""
        if text.isdigit():
            return int(text)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)
