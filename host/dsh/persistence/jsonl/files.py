"""File work for the JSONL store: safe opens, atomic creation, moves, durable writes.

Everything here blocks and runs in a worker thread, never on the event loop.

- **Only regular files are read.** A log is opened with `O_NOFOLLOW` (a
  symlink is refused, not followed) and `O_NONBLOCK` (opening a FIFO for
  reading would otherwise wait for a writer forever), then `fstat` must show
  a regular file; a directory, FIFO, socket or device under a log's name is
  refused with a `StorageError` naming it.
- **Private by default.** Logs and other files are created 0600, directories
  0700 (the umask may only narrow them).
- **Creation is atomic**: write a hidden temp file in the same directory,
  fsync it, hard-link it to its final name (which fails if the name exists,
  so creation never replaces anything), unlink the temp, fsync the directory.
- **Moves never replace**: `move` links the file under its new name and
  then unlinks the old one, fsyncing both directories; a move interrupted
  between the two steps is finished by the next attempt (same inode).

`FileState` is what identifies a file's content cheaply: device, inode, size
and modification/change times.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from ..errors import SessionExists, StorageError

__all__ = [
    "DIRECTORY_MODE",
    "FILE_MODE",
    "FileState",
    "Sync",
    "create_exclusive",
    "ensure_directory",
    "move",
    "open_regular",
    "pread_exact",
    "read_all",
    "state_of",
    "storage_errors",
    "sync_directory",
    "write_all",
    "write_replacing",
]

FILE_MODE = 0o600
DIRECTORY_MODE = 0o700
Sync = Callable[[int], None]


class FileState(NamedTuple):
    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int


def state_of(status: os.stat_result) -> FileState:
    return FileState(
        status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns
    )


@contextmanager
def storage_errors(path: Path, action: str) -> Iterator[None]:
    """Turn an `OSError` into a `StorageError` that names the action and the file."""
    try:
        yield
    except OSError as error:
        raise StorageError(f"cannot {action} {path}: {error}") from error


def open_regular(path: Path, flags: int = os.O_RDONLY) -> tuple[int, os.stat_result] | None:
    """Open a regular file without following a symlink or blocking on a FIFO.

    Returns `(fd, fstat)`, or None if nothing is there. Raises `StorageError`
    for anything that is not a regular file, and for any other failure.
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise StorageError(f"refusing {path}: it is a symbolic link") from None
        with contextlib.suppress(OSError):  # opening for writing: EISDIR, ENXIO (a FIFO), …
            mode = os.lstat(path).st_mode
            if not stat.S_ISREG(mode):
                raise StorageError(f"refusing {path}: it is {describe_mode(mode)}") from None
        raise StorageError(f"cannot open {path}: {error}") from error
    try:
        status = os.fstat(fd)
    except OSError as error:
        os.close(fd)
        raise StorageError(f"cannot open {path}: {error}") from error
    if not stat.S_ISREG(status.st_mode):
        os.close(fd)
        raise StorageError(f"refusing {path}: it is {describe_mode(status.st_mode)}")
    return fd, status


def describe_mode(mode: int) -> str:
    """`a directory`, `a FIFO`, … for a file that is not a regular one."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def read_all(fd: int, offset: int = 0) -> bytes:
    """Everything from `offset` to the end of the file."""
    chunks: list[bytes] = []
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def pread_exact(fd: int, size: int, offset: int) -> bytes:
    """`size` bytes at `offset`, or fewer only at the end of the file."""
    parts: list[bytes] = []
    while size > 0 and (chunk := os.pread(fd, size, offset)):
        parts.append(chunk)
        size -= len(chunk)
        offset += len(chunk)
    return b"".join(parts)


def write_all(fd: int, payload: bytes) -> None:
    written = os.write(fd, payload)
    while written < len(payload):  # a short write: disk full soon, or a signal
        written += os.write(fd, memoryview(payload)[written:])


def sync_directory(directory: Path, sync: Sync) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    try:
        sync(fd)
    finally:
        os.close(fd)


def ensure_directory(directory: Path, sync: Sync) -> None:
    """Create `directory` (0700) and its parents if missing, and make the entry durable."""
    if directory.is_dir():
        return
    missing = [directory, *(p for p in directory.parents if not p.exists())]
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, DIRECTORY_MODE)
        sync_directory(folder.parent, sync)


def create_exclusive(path: Path, payload: bytes, sync: Sync, sync_dir: Sync) -> int:
    """Create `path` holding `payload` atomically; returns an fd open for appending.

    Raises `SessionExists` if the name is taken (even by something that is
    not a log), `OSError` if the file system fails.
    """
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, FILE_MODE)
    try:
        try:
            write_all(fd, payload)
            sync(fd)
            os.link(temp, path)  # unlike rename, never replaces an existing log
        except FileExistsError:
            # The caller may adopt what is there (a create that failed after its link,
            # a resume). That create's directory fsync may be the step that failed, so
            # make the entry durable before anyone builds on it.
            sync_directory(path.parent, sync_dir)
            raise SessionExists(f"{path} already exists") from None
        finally:
            os.unlink(temp)
        sync_directory(path.parent, sync_dir)
    except BaseException:
        os.close(fd)
        raise
    return fd


def move(source: Path, target: Path, sync_dir: Sync) -> None:
    """Move a file to `target` without ever replacing what is there.

    Raises `FileNotFoundError` if `source` is gone, `SessionExists` if
    `target` holds another file.
    """
    try:
        os.link(source, target, follow_symlinks=False)
    except FileExistsError:
        if not os.path.samestat(os.lstat(source), os.lstat(target)):
            raise SessionExists(f"{target} already exists") from None
    sync_directory(target.parent, sync_dir)
    os.unlink(source)
    sync_directory(source.parent, sync_dir)


def write_replacing(path: Path, payload: bytes) -> None:
    """Write a cache file: to a temp, then renamed over `path` (no fsync: it is rebuildable)."""
    temp = path.with_name(f"{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    try:
        with os.fdopen(fd, "wb", closefd=True) as file:
            file.write(payload)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
