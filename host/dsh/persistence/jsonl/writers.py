"""What the JSONL I/O worker writes with: an open log (`Writer`), a batch waiting for it
(`PendingBatch`), and the threads that fdatasync a round's files side by side (`SyncPool`).

See `dsh.persistence.jsonl.logs` for the rules the worker keeps.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ...session.event import SessionEvent
from .files import FileState, Sync
from .format import EncodedBatch
from .index import LineIndex

__all__ = ["SYNC_THREADS", "PendingBatch", "SyncPool", "Writer", "datasync"]

datasync: Sync = getattr(os, "fdatasync", os.fsync)
SYNC_THREADS = 8  # measured best of 4, 8, 16, 32 for 100 files (ext4, 2 cores)


@dataclass(eq=False)
class Writer:
    """An open log file, its index and the state the last own write left it in."""

    path: Path
    fd: int
    index: LineIndex
    state: FileState
    broken: bool = False
    writing: bool = False  # a batch is being written: the file may hold more than `index`
    # Held only to change or read `state`, `writing` and the index together, never
    # across a write or an fsync, so readers never wait for the disk.
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(eq=False, slots=True)
class PendingBatch:
    """One append waiting for the I/O worker (see `JsonlBackend.append`)."""

    session_id: str
    events: Sequence[SessionEvent]
    encoded: EncodedBatch
    error: BaseException | None = None
    processed: bool = False
    taken: bool = False
    done: bool = False


def _sync_one(fd: int) -> Exception | None:
    try:
        datasync(fd)
    except Exception as error:
        return error
    return None


class SyncPool:
    """`SYNC_THREADS` threads, made by the first round that needs them, ended by `close`."""

    def __init__(self) -> None:
        self.threads: ThreadPoolExecutor | None = None

    def sync_all(self, fds: list[int]) -> list[Exception | None]:
        """fdatasync every fd side by side; each one's failure, or None."""
        if self.threads is None:
            self.threads = ThreadPoolExecutor(SYNC_THREADS, thread_name_prefix="dsh-fsync")
        return list(self.threads.map(_sync_one, fds))

    def close(self) -> None:
        if self.threads is not None:
            self.threads.shutdown()
            self.threads = None
