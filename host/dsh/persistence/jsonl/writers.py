"""What the JSONL I/O worker writes with: an open log (`Writer`) and a batch waiting for
it (`PendingBatch`); `syncing` makes a round's files durable.

See `dsh.persistence.jsonl.logs` for the rules the worker keeps.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...session.event import SessionEvent
from .files import FileState, Sync
from .format import EncodedBatch
from .index import LineIndex

__all__ = ["PendingBatch", "Writer", "datasync"]

datasync: Sync = getattr(os, "fdatasync", os.fsync)


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
