"""The blocking half of the JSONL backend: every method here runs in a worker thread.

`LogFiles` owns the open writers, the caches and the incarnations of one data
directory. `JsonlBackend` calls its mutating methods from a single I/O worker
(one at a time, in order) and its reading methods from a few reader threads
(concurrently with each other and with the writer):

- **Writers.** A log being appended to stays open with its `LineIndex` and
  the `FileState` the last own write left (`Writer`). Before each batch one
  `lstat` checks the file is still in that state; if not, something else
  changed it (another process, a restore, an editor): the writer is dropped,
  the log gets a new incarnation and the append raises `LogChanged`, storing
  nothing. The next call works from the file as it is now.
- **At most `max_open` writers are open.** Past that, the least recently
  used idle one is *parked*: its index goes to the index cache (and its
  sidecar is saved), its descriptor is closed, and the state it left is
  remembered. The next append reopens it, and a file found in any other
  state is refused with `LogChanged`, exactly as an open writer's would be.
  So descriptors stay bounded however many Sessions are live (a burst
  larger than `max_open` holds its round's files open until the round ends).
- **An append** is one `write` of the whole batch and one fdatasync. If either
  fails, the file is cut back to its last durable size, so a failed append
  leaves nothing behind a later reader could count; if even that fails the
  writer is marked broken and the next call re-reads the file.
- **A group commit** (`append_round`) of several Sessions' batches writes
  them all, then makes their files durable together (`syncing`: one syncfs
  of the filesystem, or their fdatasyncs side by side on a few helper
  threads), then records each; the I/O worker waits for that, so its
  methods still run one at a time.
- **A torn tail** found when a log is opened for writing is truncated (and
  synced) before anything is appended after it.
- **Reads** of a log that is being written look at the writer under its
  lock (held only to update the index and the state, never across a write or
  an fsync): mid-append they use the writer's index, which holds what is
  confirmed so far, so they never wait for the disk nor mistake the backend's
  own append for a foreign change. Reads go through the index:
  `pread` of just the lines asked for, each checked against the index (its
  seq, and its type for a type-filtered read). A line that does not match an
  index that was not scanned from this very file state makes the index be
  rebuilt and the read retried once; otherwise it is `CorruptLog`.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import stat as stat_module
import threading
from array import array
from collections import OrderedDict
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from ...session.event import SessionEvent
from ...session.facts import SummaryFacts
from ...session.header import SessionHeader
from ...session.ids import SESSION_ID_PATTERN, validate_session_id
from ..backend import Events, LogMark, StoredSession, StoredSummary, check_contiguous
from ..errors import CorruptLog, LogChanged, SessionExists, SessionNotFound, StorageError
from . import index as line_index
from .cache import Incarnations, IndexCache, InspectMemo, SummaryCache
from .files import (
    FileState,
    Sync,
    create_exclusive,
    describe_mode,
    ensure_directory,
    move,
    open_regular,
    pread_exact,
    read_all,
    state_of,
    storage_errors,
    sync_directory,
    write_all,
)
from .format import SUFFIX, encode_events, encode_header, parse_event, parse_header
from .index import LineIndex
from .proven import Claim, claim_of, read_log
from .reading import collection_paused, first_line, runs
from .sidecars import Sidecars
from .syncing import RoundSync
from .writers import PendingBatch, Writer, datasync

__all__ = ["LogFiles", "PendingBatch"]

log = logging.getLogger("dsh.persistence.jsonl")


# Lines closer than this are read with one pread rather than one each.
_READ_GAP = 16 * 1024
_LONG_LOG = 1_000
_LONG_LOG_BYTES = 128 * 1024


class LogFiles:
    """The logs under one data directory (see the module docstring)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        sync: Sync | None,
        sidecars: bool,
        max_index_lines: int,
        max_open: int,
        syncfs: bool = True,
    ) -> None:
        self.directory = data_dir / "sessions"
        self.trash_directory = data_dir / "trash"
        self._sync_file: Sync = sync or datasync
        self._sync_dir: Sync = sync or os.fsync
        self._sidecars = Sidecars(sidecars)
        if max_open < 1:
            raise ValueError(f"max_open must be at least 1, not {max_open}")
        self._max_open = max_open
        self._writers: dict[str, Writer] = {}
        # The I/O worker's own bookkeeping (readers never look at these): the open
        # writers, least recently used first, and the state each parked one left.
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._parked: dict[str, FileState] = {}
        self._in_round = False
        self._indexes = IndexCache(max_index_lines)
        self._summaries = SummaryCache()
        self._memo = InspectMemo()
        self._incarnations = Incarnations()
        self._stripes = [threading.Lock() for _ in range(64)]
        self._reported: dict[str, str] = {}
        self._reported_lock = threading.Lock()
        self._syncers = RoundSync(self.directory, filesystem=syncfs)

    def path_of(self, session_id: str) -> Path:
        return self.directory / (validate_session_id(session_id) + SUFFIX)

    # -- writing (the I/O worker only) ----------------------------------------

    def create(self, header: SessionHeader, events: Sequence[SessionEvent]) -> str | None:
        """Store a new log; None once stored.

        A log already stored is opened for writing (see `_exists`) and the
        refusal's message is returned for the caller to raise as
        `SessionExists`: raised here, in the worker thread, the error would sit
        in a reference cycle with the awaiting frame until a full collection —
        for good, once the heap policy has frozen it — and every resume of a
        stored Session passes here.
        """
        path = self.path_of(header.id)
        head = encode_header(header)
        with storage_errors(path, "create"):
            ensure_directory(self.directory, self._sync_dir)
            if os.path.lexists(path):  # fail fast; the link below guarantees it
                sync_directory(self.directory, self._sync_dir)
                return self._exists(header.id, path)
            batch = encode_events(events)
            try:
                fd = create_exclusive(path, head + batch.payload, self._sync_file, self._sync_dir)
            except SessionExists:
                return self._exists(header.id, path)
            state = state_of(os.fstat(fd))
        index = LineIndex(
            path=path,
            header=header.canonical(),
            bounds=array("Q", [len(head)]),
            by_type={},
            facts=SummaryFacts(),
            torn=False,
            state=state,
            scanned=True,
        )
        index.append(batch, events)
        self._drop_writer(header.id)  # a stale writer of a log deleted behind our back
        self._forget_cached(header.id)
        self._opened_writer(header.id, Writer(path, fd, index, state))
        self._incarnations.observe(header.id, state)
        return None

    def _exists(self, session_id: str, path: Path) -> str:
        # The caller adopts what is there and appends to it (a resume, a create whose
        # acknowledgement was lost): open it for writing now, which repairs a torn
        # tail even if nothing is ever appended. A log that cannot be opened is the
        # adoption's to report, not this refusal's.
        with contextlib.suppress(StorageError):
            self._writer(session_id)
        return f"session {session_id} is already stored ({path})"

    def append_round(self, batches: Sequence[PendingBatch]) -> None:
        """Write every batch of one group commit; each failure stays with its batch.

        A round of several Sessions' batches is written in three passes: each
        batch's `write`, in order; one making-durable of the files written
        (`RoundSync`: one syncfs of the filesystem, or their fdatasyncs side by
        side); then each batch's bookkeeping (or its roll-back). This is where
        a burst of Sessions' durability comes from (100 files here: 0.5 ms by
        syncfs, 4–8 ms from 8 threads, 11.4–13.3 ms one after another). Every
        batch is still acknowledged only after its file was made durable. A
        round with one batch, two batches of one Session, or an injected `sync`
        (the tests' faults, which count syncs in order) goes one batch at a time.
        """
        self._in_round = True
        try:
            self._append_round(batches)
        finally:
            self._in_round = False
            self._park_idle()  # at most once per round: its files stay open until it ends

    def _append_round(self, batches: Sequence[PendingBatch]) -> None:
        if len(batches) == 1:  # one Session flushing alone: the common case
            self._append(batches[0])
            return
        sessions = {batch.session_id for batch in batches}
        if len(sessions) < len(batches) or self._sync_file is not datasync:
            for batch in batches:
                self._append(batch)
            return
        self._syncers.prepare(len(batches))  # before the round's first write
        written: list[tuple[PendingBatch, Writer]] = []
        for batch in batches:
            writer = self._begin(batch)
            if writer is not None:
                written.append((batch, writer))
        try:
            failures = self._syncers.sync_all(
                [(writer.fd, writer.state.device) for _, writer in written]
            )
        except Exception as error:  # no helper thread could start: none is known synced
            failures = [error] * len(written)
        for (batch, writer), failure in zip(written, failures, strict=True):
            self._finish(batch, writer, failure)

    def _append(self, batch: PendingBatch) -> None:
        writer = self._begin(batch)
        if writer is None:
            return
        try:
            self._sync_file(writer.fd)
        except Exception as error:
            self._finish(batch, writer, error)
        else:
            self._finish(batch, writer, None)

    def _begin(self, batch: PendingBatch) -> Writer | None:
        """Write `batch` (not synced yet); None once it failed (its error set, processed)."""
        try:
            writer = self._writer(batch.session_id)
            check_contiguous(batch.session_id, batch.events, writer.index.length)
        except Exception as error:
            batch.error = error
            batch.processed = True
            return None
        with writer.lock:
            writer.writing = True
        try:
            write_all(writer.fd, batch.encoded.payload)
        except Exception as error:
            self._finish(batch, writer, error)
            return None
        return writer

    def _finish(self, batch: PendingBatch, writer: Writer, failure: Exception | None) -> None:
        """Record what `batch` made durable, or cut the file back after `failure`."""
        try:
            if failure is not None:
                self._roll_back(writer)
                if isinstance(failure, OSError):
                    batch.error = StorageError(f"cannot append to {writer.path}: {failure}")
                    batch.error.__cause__ = failure
                else:
                    batch.error = failure
                return
            with writer.lock:
                writer.index.append(batch.encoded, batch.events)
                self._settled(writer)
            self._incarnations.record(batch.session_id, writer.state)
        except Exception as error:
            batch.error = error
        finally:
            with writer.lock:
                writer.writing = False
            batch.processed = True

    def _settled(self, writer: Writer) -> None:
        writer.state = state_of(os.fstat(writer.fd))
        writer.index.state = writer.state

    def _roll_back(self, writer: Writer) -> None:
        # A failed write or fsync leaves an unknown part of the batch in the page
        # cache (and after a failed fsync the kernel may never retry it), so cut the
        # file back to what was durable; a later cursor() then reports the truth.
        # If even that fails, the next call re-reads the file from disk.
        try:
            os.ftruncate(writer.fd, writer.index.end)
            self._sync_file(writer.fd)
            with writer.lock:
                self._settled(writer)
        except Exception:
            writer.broken = True

    def _writer(self, session_id: str) -> Writer:
        # The open writers are keyed by ids that were validated when they opened, so
        # the common case (this Session's file is open and unchanged) builds no path.
        writer = self._writers.get(session_id)
        if writer is not None:
            found = self._found(writer)
            if found == "same":
                self._recent.move_to_end(session_id)
                return writer
            self._drop_writer(session_id)
            self._forget_cached(session_id)
            if found == "changed":
                raise _changed(session_id, writer.path)
        path = self.path_of(session_id)
        with storage_errors(path, "open"):
            opened = open_regular(path, os.O_RDWR | os.O_APPEND)
        if opened is None:
            self._parked.pop(session_id, None)  # gone: whatever comes back is new
            raise SessionNotFound(f"session {session_id} is not stored ({path})")
        fd, status = opened
        try:
            state = state_of(status)
            parked = self._parked.pop(session_id, None)
            if parked is not None and parked != state:
                self._forget_cached(session_id)
                self._incarnations.observe(session_id, state)
                raise _changed(session_id, path)
            self._incarnations.observe(session_id, state)
            with self._stripe(session_id):
                index = self._index(session_id, path, fd, state)
            if index.torn:
                with storage_errors(path, "repair"):
                    os.ftruncate(fd, index.end)
                    self._sync_file(fd)
                    state = state_of(os.fstat(fd))
                index.torn = False
                self._incarnations.record(session_id, state)  # our own repair
            index.state = state
        except BaseException:
            os.close(fd)
            raise
        self._indexes.drop(session_id)  # the writer owns it now
        writer = Writer(path, fd, index, state)
        self._opened_writer(session_id, writer)
        return writer

    def _opened_writer(self, session_id: str, writer: Writer) -> None:
        self._writers[session_id] = writer
        self._recent[session_id] = None
        self._park_idle(keep=session_id)

    def _park_idle(self, keep: str | None = None) -> None:
        """Park the least recently used idle writers (not `keep`, the one just asked
        for) until at most `max_open` are open: after a round, or a writer opened
        outside one."""
        excess = len(self._writers) - self._max_open
        if self._in_round or excess <= 0:
            return
        oldest = (session_id for session_id in self._recent if session_id != keep)
        for session_id in list(itertools.islice(oldest, excess)):
            self._park(session_id, self._writers[session_id])

    def _park(self, session_id: str, writer: Writer) -> None:
        if writer.broken:  # the next call re-reads the file anyway
            self._drop_writer(session_id)
            return
        self._sidecars.save(writer.index, writer.fd, writer.state)
        # Readers find the index in the cache before the writer is gone, and the
        # state is remembered so that a reopen notices a change made meanwhile.
        self._indexes.put(session_id, writer.index)
        self._drop_writer(session_id)
        self._parked[session_id] = writer.state

    def _found(self, writer: Writer) -> str:
        """`same` if the file is exactly what `writer` last left, `gone` if it is not
        there, `broken` after a failed roll-back, else `changed`."""
        try:
            status = os.lstat(writer.path)
        except FileNotFoundError:
            return "gone"
        if writer.broken:
            return "broken"
        return "same" if state_of(status) == writer.state else "changed"

    def release(self, session_id: str) -> None:
        writer = self._writers.get(session_id)
        if writer is not None:
            self._sidecars.save(writer.index, writer.fd, writer.state)
        self._drop_writer(session_id)

    def _drop_writer(self, session_id: str) -> None:
        self._parked.pop(session_id, None)
        writer = self._writers.pop(session_id, None)
        if writer is not None:
            del self._recent[session_id]
            os.close(writer.fd)

    def release_all(self) -> None:
        try:
            for session_id in list(self._writers):
                self.release(session_id)
            self._parked.clear()
        finally:
            self._syncers.close()

    def trash(self, session_id: str) -> None:
        path = self.path_of(session_id)
        self.release(session_id)
        target = self.trash_directory / path.name
        with storage_errors(path, "move to the trash"):
            self._check_movable(path, session_id)
            ensure_directory(self.trash_directory, self._sync_dir)
            try:
                move(path, target, self._sync_dir)
            except SessionExists:
                raise SessionExists(
                    f"the trash already holds a session {session_id} ({target})"
                ) from None
            self._move_sidecar(path, target)
        self._forget_cached(session_id)
        self._incarnations.forget(session_id)

    def restore(self, session_id: str) -> None:
        path = self.path_of(session_id)
        source = self.trash_directory / path.name
        with storage_errors(source, "restore"):
            if not os.path.lexists(source):
                raise SessionNotFound(f"the trash holds no session {session_id} ({source})")
            ensure_directory(self.directory, self._sync_dir)
            try:
                move(source, path, self._sync_dir)
            except SessionExists:
                raise SessionExists(f"session {session_id} is already stored ({path})") from None
            self._move_sidecar(source, path)
        self._forget_cached(session_id)
        self._incarnations.forget(session_id)

    def _check_movable(self, path: Path, session_id: str) -> None:
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            raise SessionNotFound(f"session {session_id} is not stored ({path})") from None
        if not stat_module.S_ISREG(mode):
            raise StorageError(f"refusing {path}: it is {describe_mode(mode)}")

    def _move_sidecar(self, source: Path, target: Path) -> None:
        # A cache: if it cannot follow its log, the log's next read rebuilds it.
        with contextlib.suppress(OSError):
            os.replace(Sidecars.path_of(source), Sidecars.path_of(target))

    # -- reading (any reader thread) ----------------------------------------------

    def cursor(self, session_id: str) -> int | None:
        with self._opened(session_id) as opened:
            if opened is None:
                return None
            return self._live_index(session_id, *opened).length

    def mark(self, session_id: str) -> LogMark | None:
        with self._opened(session_id) as opened:
            if opened is None:
                return None
            index = self._live_index(session_id, *opened)
            assert index.state is not None
            return LogMark(index.length, self._incarnations.observe(session_id, index.state))

    def header(self, session_id: str) -> SessionHeader | None:
        path = self.path_of(session_id)
        with self._opened(session_id) as opened:
            if opened is None:
                return None
            fd, state = opened
            known = self._known_index(session_id, state)
            if known is not None:
                return known.header
            with storage_errors(path, "read"):
                head = first_line(fd)
            if head is None:
                raise CorruptLog(path, 1, "no header line")
            return parse_header(path, session_id, head)

    def read(
        self, session_id: str, start: int, stop: int | None, types: Collection[str] | None
    ) -> Events:
        if start < 0:
            raise ValueError(f"read: start must be at least 0, not {start}")
        path = self.path_of(session_id)
        with self._opened(session_id) as opened:
            if opened is None:
                raise SessionNotFound(f"session {session_id} is not stored ({path})")
            fd, state = opened
            index = self._live_index(session_id, fd, state)
            end = index.length if stop is None else stop
            try:
                return self._events(index, fd, index.seqs(start, end, types), types)
            except CorruptLog:
                if index.scanned:
                    raise
            # The index was not scanned from this state (a sidecar, a cache) and lied.
            log.info("the line index of %s was out of date; rebuilt", path)
            with self._stripe(session_id):
                index = self._rebuild(session_id, path, fd, state)
            end = index.length if stop is None else stop
            return self._events(index, fd, index.seqs(start, end, types), types)

    def inspect(self, session_id: str) -> StoredSession | None:
        path = self.path_of(session_id)
        with self._opened(session_id) as opened:
            if opened is None:
                return None
            fd, state = opened
            held = self._memo.get(session_id, state)
            if held is not None:
                mark = LogMark(len(held.events), self._incarnations.observe(session_id, state))
                return held if held.mark == mark else replace(held, mark=mark)
            with storage_errors(path, "read"):
                data = read_all(fd)
            claim = self._claim(session_id, path, state)
            with collection_paused(len(data) > _LONG_LOG_BYTES):
                index, events = read_log(path, session_id, data, state, claim)
        mark = LogMark(len(events), self._incarnations.observe(session_id, state))
        stored = StoredSession(index.header, events, index.torn, mark)
        self._memo.put(session_id, state, stored)
        if session_id not in self._writers:
            self._indexes.put(session_id, index)
        return stored

    def list(self) -> list[StoredSummary]:
        try:
            entries = sorted(os.scandir(self.directory), key=lambda entry: entry.name)
        except FileNotFoundError:
            return []
        except OSError as error:
            raise StorageError(f"cannot list {self.directory}: {error}") from error
        summaries: list[StoredSummary] = []
        for entry in entries:
            summary = self._listed(entry)
            if summary is not None:
                summaries.append(summary)
        return summaries

    def _listed(self, entry: os.DirEntry[str]) -> StoredSummary | None:
        """The summary of one directory entry, or None (skipped, and reported once)."""
        name = entry.name
        if name.startswith("."):
            return None  # the backend's own temp files and sidecars
        session_id = name.removesuffix(SUFFIX)
        if session_id == name or SESSION_ID_PATTERN.fullmatch(session_id) is None:
            self._skip(name, "its name is not <session id>.jsonl")
            return None
        try:
            if not entry.is_file(follow_symlinks=False):
                mode = entry.stat(follow_symlinks=False).st_mode
                self._skip(name, f"it is {describe_mode(mode)}")
                return None
            summary = self._summary(session_id)
        except FileNotFoundError:
            return None  # deleted while listing
        except (StorageError, OSError) as error:
            self._skip(name, str(error))
            return None
        if summary is None:
            return None
        self._reported.pop(name, None)
        return summary

    def _summary(self, session_id: str) -> StoredSummary | None:
        with self._opened(session_id) as opened:
            if opened is None:
                return None
            fd, state = opened
            summary = self._summaries.get(session_id, state)
            if summary is None:
                summary = self._live_index(session_id, fd, state).summary()
            self._summaries.put(session_id, state, summary)
            return summary

    def _skip(self, name: str, reason: str) -> None:
        with self._reported_lock:
            if self._reported.get(name) == reason:
                return
            self._reported[name] = reason
        log.warning("skipping %s in the session list: %s", self.directory / name, reason)

    # -- indexes -------------------------------------------------------------------

    @contextmanager
    def _opened(self, session_id: str) -> Iterator[tuple[int, FileState] | None]:
        path = self.path_of(session_id)
        with storage_errors(path, "read"):
            opened = open_regular(path)
        if opened is None:
            yield None
            return
        fd, status = opened
        try:
            yield fd, state_of(status)
        finally:
            os.close(fd)

    def _claim(self, session_id: str, path: Path, state: FileState) -> Claim | None:
        """What an index of this very state, or the sidecar, says is proven (`proven`)."""
        known = self._known_index(session_id, state)
        if known is not None:
            return claim_of(known.proven, known.bounds, known.crc)
        sidecar = self._sidecars.read(path, state)
        return None if sidecar is None else claim_of(sidecar.proven, sidecar.bounds, sidecar.crc)

    def _live_index(self, session_id: str, fd: int, state: FileState) -> LineIndex:
        """The index of the log open at `fd`: the writer's if it is current (or in the
        middle of an append: its index then holds what is confirmed so far), else a
        cached, a sidecar or a freshly scanned one. Never waits for an fsync."""
        writer = self._writers.get(session_id)
        if writer is not None:
            with writer.lock:
                current = state_of(os.fstat(fd))
                if writer.writing or current == writer.state:
                    return writer.index
                state = current
        with self._stripe(session_id):
            return self._index(session_id, self.path_of(session_id), fd, state)

    def _known_index(self, session_id: str, state: FileState) -> LineIndex | None:
        writer = self._writers.get(session_id)
        if writer is not None and writer.state == state:
            return writer.index
        return self._indexes.get(session_id, state)

    def _index(self, session_id: str, path: Path, fd: int, state: FileState) -> LineIndex:
        index = self._indexes.get(session_id, state)
        if index is not None:
            return index
        index = self._sidecars.load(session_id, path, fd, state)
        if index is None:
            return self._rebuild(session_id, path, fd, state)
        self._indexes.put(session_id, index)
        return index

    def _rebuild(self, session_id: str, path: Path, fd: int, state: FileState) -> LineIndex:
        with storage_errors(path, "read"):
            data = read_all(fd)
        index = line_index.build(path, session_id, data, state)
        self._indexes.put(session_id, index)
        self._sidecars.save(index, fd, state)
        return index

    def _events(
        self,
        index: LineIndex,
        fd: int,
        seqs: Sequence[int],
        types: Collection[str] | None,
    ) -> Events:
        wanted = None if types is None else set(types)
        events: list[SessionEvent] = []
        with collection_paused(len(seqs) > _LONG_LOG), storage_errors(index.path, "read"):
            for first, last in runs(index, seqs):
                base = index.bounds[first]
                data = pread_exact(fd, index.bounds[last + 1] - base, base)
                while len(events) < len(seqs) and seqs[len(events)] <= last:
                    seq = seqs[len(events)]
                    start, stop = index.span(seq)
                    event = parse_event(index.path, seq, data[start - base : stop - base])
                    if wanted is not None and event.type not in wanted:
                        raise CorruptLog(
                            index.path, seq + 2, f"type {event.type}, not one the index names"
                        )
                    events.append(event)
        return events

    def _stripe(self, session_id: str) -> threading.Lock:
        return self._stripes[hash(session_id) % len(self._stripes)]

    def _forget_cached(self, session_id: str) -> None:
        self._indexes.drop(session_id)
        self._summaries.drop(session_id)
        self._memo.drop(session_id)


def _changed(session_id: str, path: Path) -> LogChanged:
    return LogChanged(
        f"session {session_id}: {path} changed since this process last wrote it "
        "(another writer, a restore or an edit); nothing was appended"
    )
