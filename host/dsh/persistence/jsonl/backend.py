"""The JSONL backend: one file per Session, the embedded default (DESIGN §4, public format).

`<data_dir>/sessions/<id>.jsonl` holds the header on line 1 and one event per
further line (`format`). A rebuildable line-offset index per log (`index`,
kept in memory and, for long logs, in a hidden sidecar file
`sessions/.<id>.jsonl.idx`) makes `header`, `cursor`, `read` and `list` cost
what they return, not the size of the log. Trashed logs (and their sidecars)
live in `<data_dir>/trash/`.

Where the I/O runs: never on the event loop. Every mutation (create,
append, repair, release, trash, restore) runs in **one I/O worker** per
backend (a thread of its own, `worker`), in order; reads run in a few reader
threads beside it (`LogFiles` says how they stay consistent). A stalled disk
therefore stalls the calls that touch it, never the loop, so `/api/health`
and the page stay up.

Group commit. A worker-thread round trip costs about as much as an fsync
(≈ 0.05–0.25 ms on the project's machines), so appends are handed over in
rounds (`bench/persistence_throughput.py` measures what the hand-over costs
a single Session):

1. While one round is being written, every append that arrives (from any
   Session) joins the next, which is written by one trip to the worker with
   one write per Session and one making-durable of them all (`syncing`).
2. A round first lets the event loop run until a pass of it adds no append
   to the round (at most `GATHER_PASSES` passes), then goes to the worker
   without another pass. A lone append so pays the one pass that handing
   it to a thread through anyio used to cost, and the appends made in the
   same pass as the first — the dispatches of reminders due together — join
   its round instead of waiting for it: a burst of 100 was two rounds, the
   first of one file, and is now one. The dispatches of a larger storm
   arrive over a dozen or more passes, and a round handed to the worker
   while the loop is still busy making them is written at the pace the loop
   lets go of the GIL: 1,000 of them took three rounds, and the second wrote
   its 448 files over 130–180 ms beside the busy loop (1,000 take 25 ms
   beside an idle one); gathered, they are one round written once the loop
   is done (bench `burst`: the worst of three rounds of 1,000 went from
   2.2× to 1.9× the fsync bound, of 100 from 3.1× to 2.1×).
3. A cancelled append leaves once nothing it asked for is in flight: a
   batch still queued is taken out (nothing is written for a caller told it
   was cancelled); one already in the worker's hands is waited for, as the
   worker's rule 2 waits for the append that took it there, so whoever acts
   on the cancellation finds the write done. `aclose()` first writes the
   rounds under way and queued, then releases every log.

This backend assumes one writing process per data directory; `dsh web`
enforces it with `DataDirLock` (`lock.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from anyio import CapacityLimiter
from anyio.lowlevel import checkpoint

from ...session.event import SessionEvent
from ...session.header import SessionHeader
from ...session.ids import validate_session_id
from ..backend import (
    Backend,
    Events,
    LogMark,
    SessionIds,
    StoredSession,
    StoredSummary,
    check_contiguous,
)
from ..errors import SessionExists
from .files import Sync
from .format import encode_events
from .logs import LogFiles
from .trash import read_trashed, trashed_ids
from .worker import IoWorker
from .writers import PendingBatch

__all__ = ["JsonlBackend"]

_T = TypeVar("_T")
DEFAULT_READERS = 4
DEFAULT_INDEX_LINES = 2_000_000
# A quarter of the usual 1,024-descriptor limit: the web server keeps half for
# connections, the rest is the lock, the wake index and model connections. A
# parked writer costs one open and fstat on its next append (7 µs measured).
DEFAULT_OPEN_LOGS = 256
# A storm's dispatches arrive over a dozen or more passes; the bound keeps a steady
# stream of appends from holding a round back for long.
GATHER_PASSES = 64


class JsonlBackend(Backend):
    """Session logs as JSONL files under `<data_dir>/sessions/` (see the module docstring).

    - `sync` replaces every fsync (of logs, new files and directories) with a
      callable taking the file descriptor; it exists so tests can inject
      faults at the durability point (`dsh.testing.FaultyBackend.jsonl`).
    - `sidecars=False` keeps line indexes in memory only.
    - `readers` is how many reads may run at once (in worker threads);
      `max_index_lines` bounds the lines of all cached indexes (≈ 12 bytes each);
      `max_open_logs` bounds the logs held open for appending, however many
      Sessions are live (the least recently used idle one is closed and
      reopened on its next append, still refused if it changed meanwhile).
    - `syncfs=False` makes a group commit's files durable by their own
      fdatasyncs even where one syncfs of the filesystem would do
      (`dsh.persistence.jsonl.syncing` says when it does, and what it costs).
    """

    def __init__(
        self,
        data_dir: Path | str,
        *,
        sync: Sync | None = None,
        sidecars: bool = True,
        readers: int = DEFAULT_READERS,
        max_index_lines: int = DEFAULT_INDEX_LINES,
        max_open_logs: int = DEFAULT_OPEN_LOGS,
        syncfs: bool = True,
    ) -> None:
        self.data_dir = Path(data_dir)
        self._files = LogFiles(
            self.data_dir,
            sync=sync,
            sidecars=sidecars,
            max_index_lines=max_index_lines,
            max_open=max_open_logs,
            syncfs=syncfs,
        )
        self.directory = self._files.directory
        self.trash_directory = self._files.trash_directory
        self._readers = readers
        self._reading: CapacityLimiter | None = None
        self._worker = IoWorker(f"dsh jsonl writer {self.data_dir}")
        self._queue: list[PendingBatch] = []
        self._committing = False
        self._committed: anyio.Event | None = None

    def path_of(self, session_id: str) -> Path:
        """The file of `session_id`; raises `InvalidSessionId` before building any path."""
        return self._files.path_of(session_id)

    # -- Backend: writing ------------------------------------------------------

    async def initialize(self, header: SessionHeader, events: Sequence[SessionEvent]) -> None:
        self.path_of(header.id)
        check_contiguous(header.id, events, 0)
        # Encoded by the worker once it knows the file is new: a resume's creation is
        # refused (the log exists), and encoding a long log for nothing costs.
        refusal = await self._write(self._files.create, header, events)
        if refusal is not None:
            raise SessionExists(refusal)

    async def append(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        validate_session_id(session_id)
        if not events:
            return
        batch = PendingBatch(session_id, events, encode_events(events))
        self._queue.append(batch)
        try:
            await self._rounds_until(lambda: batch.done)
        except BaseException:
            # Cancelled: a batch already in the worker's hands is waited for (the
            # worker's rule 2, for every append of a round, not only the one that
            # took it there); one still queued is taken out, so nothing is written
            # for a caller who was told it was cancelled.
            await self._round_over(batch)
            if not batch.taken and batch in self._queue:
                self._queue.remove(batch)
            raise
        if batch.error is not None:
            raise batch.error

    async def _rounds_until(self, done: Callable[[], bool]) -> None:
        """Until `done()`: wait for the round under way, or lead the next one."""
        while not done():
            if self._committing:
                await self._round_finished().wait()
            else:
                await self._commit_round()

    async def _round_over(self, batch: PendingBatch) -> None:
        """Wait until the round that took `batch` is over, whatever cancels the caller."""
        with anyio.CancelScope(shield=True):  # anyio's cancellation waits outside
            while batch.taken and not batch.done:
                # A task's own `cancel()` passes anyio's shield: wait on.
                with contextlib.suppress(asyncio.CancelledError):
                    await self._round_finished().wait()

    async def _commit_round(self) -> None:
        """Write everything queued in one trip to the I/O worker (one group commit)."""
        self._committing = True
        batches: list[PendingBatch] = []
        try:
            await self._gather()
            batches, self._queue = self._queue, []
            for batch in batches:
                batch.taken = True
            if batches:  # each one queued may have been cancelled while gathering
                await self._write(self._files.append_round, batches)
        finally:
            # A round cancelled before it reached the worker writes nothing: its
            # batches go back to the front of the queue for the next round.
            unprocessed = [batch for batch in batches if not batch.processed]
            for batch in unprocessed:
                batch.taken = False
            self._queue[:0] = unprocessed
            for batch in batches:
                batch.done = batch.processed
            self._committing = False
            finished, self._committed = self._committed, None
            if finished is not None:  # made only when an append waits for this round
                finished.set()

    async def _gather(self) -> None:
        """Let the event loop run until a pass adds no append, or `GATHER_PASSES` (rule 2)."""
        for _ in range(GATHER_PASSES):
            queued = len(self._queue)
            await checkpoint()
            if len(self._queue) == queued:
                return

    def _round_finished(self) -> anyio.Event:
        if self._committed is None:
            self._committed = anyio.Event()
        return self._committed

    async def release(self, session_id: str) -> None:
        validate_session_id(session_id)
        await self._write(self._files.release, session_id)

    async def aclose(self) -> None:
        """Write what was appended before it (the rounds under way and queued), then
        release every log; the worker's thread ends once that is done."""
        try:
            await self._rounds_until(lambda: not (self._queue or self._committing))
            await self._write(self._files.release_all)
        finally:
            self._worker.close()

    async def trash(self, session_id: str) -> None:
        validate_session_id(session_id)
        await self._write(self._files.trash, session_id)

    async def restore(self, session_id: str) -> None:
        validate_session_id(session_id)
        await self._write(self._files.restore, session_id)

    # -- Backend: reading --------------------------------------------------------

    async def trashed(self) -> SessionIds:
        return await self._read(trashed_ids, self.trash_directory)

    async def inspect_trashed(self, session_id: str) -> StoredSession | None:
        validate_session_id(session_id)
        return await self._read(read_trashed, self.trash_directory, session_id)

    async def cursor(self, session_id: str) -> int | None:
        return await self._read(self._files.cursor, validate_session_id(session_id))

    async def mark(self, session_id: str) -> LogMark | None:
        return await self._read(self._files.mark, validate_session_id(session_id))

    async def header(self, session_id: str) -> SessionHeader | None:
        return await self._read(self._files.header, validate_session_id(session_id))

    async def read(
        self,
        session_id: str,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
    ) -> Events:
        validate_session_id(session_id)
        chosen = None if types is None else tuple(types)
        return await self._read(self._files.read, session_id, start, stop, chosen)

    async def inspect(self, session_id: str) -> StoredSession | None:
        return await self._read(self._files.inspect, validate_session_id(session_id))

    async def list(self) -> list[StoredSummary]:
        return await self._read(self._files.list)

    # -- threads -------------------------------------------------------------------

    async def _write(self, func: Callable[..., _T], *args: Any) -> _T:
        return await self._worker.run(func, *args)

    async def _read(self, func: Callable[..., _T], *args: Any) -> _T:
        # Made on first use, inside the event loop that will wait on it.
        if self._reading is None:
            self._reading = CapacityLimiter(self._readers)
        return await anyio.to_thread.run_sync(func, *args, limiter=self._reading)
