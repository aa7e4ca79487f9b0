"""The JSONL backend: one file per Session, the embedded default (DESIGN §4, public format).

`<data_dir>/sessions/<id>.jsonl` holds the header on line 1 (written
canonically: an absent `delegationDepth` is written as 0) and one event per
further line, UTF-8, every line `\\n`-terminated.

Durability:

- A new file is created atomically: written to a temp file in the same
  directory (named `.<id>.jsonl.<random>.tmp`, which no listing or id can
  match), fsynced, hard-linked to its final name (which fails if the name
  exists, so creation never replaces a Session), and the directory fsynced.
- An append is one `write` of the whole batch and one fdatasync. If either
  fails, the file is truncated back to its last durable size, so a failed
  append leaves nothing behind that a later reader could count.
- A torn last line (no trailing `\\n`, or a final line that is not JSON) is
  the artefact of a crash during an append: readers ignore it, and the next
  writer truncates it before appending. Any other malformed line raises
  `CorruptLog` with the file and line number; nothing is appended to such a
  file.

Where the I/O runs. An append costs one `write` and one fdatasync, ≈ 0.25 ms
of loop time on the project's machines, and a worker-thread round trip costs
about the same again (≈ 0.25 ms measured for a no-op `to_thread` call), so
sending appends to a thread halves single-event throughput without freeing
the loop for anything useful. Appends and creation therefore run inline by
default and the coordinator batches, so the loop blocks for one fsync per
batch, not per event. Whole-file work — reading a log to inspect it, to find
its cursor or to open it for writing, and listing — is unbounded in size and
always runs in a worker thread. `offload=True` moves appends and creation to a
worker thread too, for storage whose fsync is slow (network or busy disks).

Validation is remembered. A full read validates every line; the backend
keeps what it found (length, durable size, torn tail) with the file's
identity and state (device, inode, size, mtime, ctime), and while anyone still
holds the `StoredSession` an `inspect` returned, a weak reference to it. A
later `inspect`, `cursor` or open-for-append whose `fstat` shows the same
state reuses that instead of parsing the file again: resuming a Session
reads and decodes its log once, not three times (read, prove the prefix,
open for appending).

This backend assumes one writing process per data directory.
"""

from __future__ import annotations

import gc
import json
import os
import secrets
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import anyio
import anyio.to_thread
from pydantic import ValidationError

from ..session import SESSION_ID_PATTERN, SessionEvent, SessionHeader, validate_session_id
from ..validation import describe
from .backend import (
    Backend,
    CorruptLog,
    SessionExists,
    SessionNotFound,
    StorageError,
    StoredSession,
    StoredSummary,
    check_contiguous,
)

__all__ = ["JsonlBackend"]

_SUFFIX = ".jsonl"
_T = TypeVar("_T")
_datasync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)
_Summaries = list[StoredSummary]  # spelled once here: inside the class `list` is a method
_serialize: Callable[[SessionEvent], bytes] = SessionEvent.__pydantic_serializer__.to_json


@dataclass(slots=True)
class _Writer:
    """An open log file and what is durably in it."""

    path: Path
    fd: int
    device: int
    inode: int
    size: int
    cursor: int
    broken: bool = False


@dataclass(frozen=True, slots=True)
class _Log:
    header: SessionHeader
    events: tuple[SessionEvent, ...]
    length: int
    torn: bool
    valid_size: int


_FileState = tuple[int, int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns
_MAX_SCANS = 1024


@dataclass(frozen=True, slots=True)
class _Scan:
    """What a full validation of a log found, and the file state it was read in."""

    state: _FileState
    length: int
    valid_size: int
    torn: bool
    stored: weakref.ref[StoredSession] | None = None


@dataclass(frozen=True, slots=True)
class _Read:
    """A log read from disk (`log`), or None when its state matched the known one."""

    state: _FileState
    log: _Log | None


class JsonlBackend(Backend):
    """Session logs as JSONL files under `<data_dir>/sessions/`.

    `offload` runs appends and creation in a worker thread (see the module
    docstring). `sync` replaces every fsync (files and the directory) with a
    callable taking the file descriptor; it exists so tests can inject faults
    at the durability point (`dsh.testing.FaultyBackend.jsonl`).

    Per Session it keeps the log open for appending, with its size and
    cursor, between calls (until `release`). Before each append it checks
    with one `stat` that the file is still the one it last wrote (same inode
    and size); otherwise it re-reads it from disk.
    """

    def __init__(
        self,
        data_dir: Path | str,
        *,
        offload: bool = False,
        sync: Callable[[int], None] | None = None,
    ) -> None:
        self.directory = Path(data_dir) / "sessions"
        self._offload = offload
        self._sync_file = sync or _datasync
        self._sync_dir = sync or os.fsync
        self._writers: dict[str, _Writer] = {}
        self._locks: dict[str, anyio.Lock] = {}
        self._scans: dict[str, _Scan] = {}
        self._directory_ready = False

    def path_of(self, session_id: str) -> Path:
        """The file of `session_id`; raises `InvalidSessionId` before building any path."""
        return self.directory / (validate_session_id(session_id) + _SUFFIX)

    # -- Backend ----------------------------------------------------------

    async def initialize(self, header: SessionHeader, events: Sequence[SessionEvent]) -> None:
        path = self.path_of(header.id)
        check_contiguous(header.id, events, 0)
        async with self._lock(header.id):
            writer = await self._mutate(self._create, path, header, events)
            self._forget(header.id)  # a stale writer of a log deleted behind our back
            self._writers[header.id] = writer

    async def append(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        validate_session_id(session_id)
        if not events:
            return
        writer = self._writers.get(session_id)
        lock = self._locks.get(session_id)
        if (
            writer is not None
            and not self._offload
            and not (lock is not None and lock.locked())
            and self._current(writer)
        ):
            # Inline and uncontended: the check and the write below do not yield, so
            # nothing can interleave with them, and taking the lock would cost more
            # than the write (an anyio Lock round trip is a loop iteration).
            check_contiguous(session_id, events, writer.cursor)
            self._write(writer, _lines(events), len(events))
            return
        async with self._lock(session_id):
            writer = await self._writer(session_id)
            check_contiguous(session_id, events, writer.cursor)
            await self._mutate(self._write, writer, _lines(events), len(events))

    async def cursor(self, session_id: str) -> int | None:
        path = self.path_of(session_id)
        async with self._lock(session_id):
            writer = self._writers.get(session_id)
            if writer is not None and self._current(writer):
                return writer.cursor
            scan = self._scans.get(session_id)
            known = None if scan is None else scan.state
            read = await anyio.to_thread.run_sync(_read_log_unless, path, session_id, known)
        if read is None:
            return None
        if read.log is None:
            assert scan is not None
            return scan.length
        self._remember(session_id, read.state, read.log, None)
        return read.log.length

    async def inspect(self, session_id: str) -> StoredSession | None:
        path = self.path_of(session_id)
        scan = self._scans.get(session_id)
        # Held strongly across the read, so it cannot vanish between the check and the use.
        known = None if scan is None or scan.stored is None else scan.stored()
        state = None if known is None or scan is None else scan.state
        read = await anyio.to_thread.run_sync(_read_log_unless, path, session_id, state)
        if read is None:
            return None
        if read.log is None:
            assert known is not None
            return known
        log = read.log
        stored = StoredSession(header=log.header, events=log.events, torn_tail=log.torn)
        self._remember(session_id, read.state, log, stored)
        return stored

    async def list(self) -> list[StoredSummary]:
        return await anyio.to_thread.run_sync(self._list)

    async def release(self, session_id: str) -> None:
        validate_session_id(session_id)
        lock = self._locks.get(session_id)
        if lock is None:
            self._forget(session_id)
            return
        async with lock:
            self._forget(session_id)
        if not lock.locked() and lock.statistics().tasks_waiting == 0:
            self._locks.pop(session_id, None)

    async def aclose(self) -> None:
        for session_id in {*self._locks, *self._writers}:
            await self.release(session_id)

    # -- per-Session state ------------------------------------------------

    def _lock(self, session_id: str) -> anyio.Lock:
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = anyio.Lock()
        return lock

    def _forget(self, session_id: str) -> None:
        writer = self._writers.pop(session_id, None)
        if writer is not None:
            os.close(writer.fd)

    def _remember(
        self, session_id: str, state: _FileState, log: _Log, stored: StoredSession | None
    ) -> None:
        self._scans.pop(session_id, None)
        while len(self._scans) >= _MAX_SCANS:
            del self._scans[next(iter(self._scans))]
        held = None if stored is None else weakref.ref(stored)
        self._scans[session_id] = _Scan(state, log.length, log.valid_size, log.torn, held)

    def _current(self, writer: _Writer) -> bool:
        """True if the file on disk is still exactly what `writer` last wrote."""
        try:
            stat = os.stat(writer.path)
        except FileNotFoundError:
            return False
        return not writer.broken and (stat.st_dev, stat.st_ino, stat.st_size) == (
            writer.device,
            writer.inode,
            writer.size,
        )

    async def _writer(self, session_id: str) -> _Writer:
        writer = self._writers.get(session_id)
        if writer is not None and self._current(writer):
            return writer
        # A failed roll-back, or the file changed behind our back (another writer,
        # a restore, a deletion), or nothing cached: read it from disk.
        self._forget(session_id)
        scan = self._scans.pop(session_id, None)
        path = self.path_of(session_id)
        writer = await anyio.to_thread.run_sync(self._open, session_id, path, scan)
        self._writers[session_id] = writer
        return writer

    async def _mutate(self, func: Callable[..., _T], *args: Any) -> _T:
        if self._offload:
            return await anyio.to_thread.run_sync(func, *args)
        return func(*args)

    # -- file work (inline or in a worker thread; never touches the dicts) --

    def _open(self, session_id: str, path: Path, scan: _Scan | None) -> _Writer:
        """Open a log for appending: validate it (unless `scan` saw it in this very
        state) and truncate a torn tail."""
        with _storage_errors(path, "open"):
            try:
                fd = os.open(path, os.O_RDWR | os.O_APPEND)
            except FileNotFoundError:
                raise SessionNotFound(f"session {session_id} is not stored ({path})") from None
            try:
                stat = os.fstat(fd)
                if scan is not None and scan.state == _state(stat):
                    length, valid_size, torn = scan.length, scan.valid_size, scan.torn
                else:
                    log = _parse(path, session_id, _read_all(fd))
                    length, valid_size, torn = log.length, log.valid_size, log.torn
                if torn:
                    os.ftruncate(fd, valid_size)
                    self._sync_file(fd)
            except BaseException:
                os.close(fd)
                raise
        return _Writer(path, fd, stat.st_dev, stat.st_ino, valid_size, length)

    def _create(self, path: Path, header: SessionHeader, events: Sequence[SessionEvent]) -> _Writer:
        with _storage_errors(path, "create"):
            self._ensure_directory()
            if path.exists():  # fail fast, before serialising; the link below guarantees it
                self._exists(path, header.id)
            payload = _line(header.canonical().to_json()) + _lines(events)
            temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
            fd = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
            try:
                try:
                    _write_all(fd, payload)
                    self._sync_file(fd)
                    os.link(temp, path)  # unlike rename, never replaces an existing log
                except FileExistsError:
                    self._exists(path, header.id)
                finally:
                    os.unlink(temp)
                stat = os.fstat(fd)
                self._sync_directory(self.directory)
            except BaseException:
                os.close(fd)
                raise
        return _Writer(path, fd, stat.st_dev, stat.st_ino, len(payload), len(events))

    def _exists(self, path: Path, session_id: str) -> NoReturn:
        # The caller may adopt this log (a create that failed after its link,
        # a resume). That create's directory fsync may be the step that failed,
        # so make the entry durable before anyone builds on it.
        self._sync_directory(self.directory)
        raise SessionExists(f"session {session_id} is already stored ({path})")

    def _write(self, writer: _Writer, payload: bytes, count: int) -> None:
        try:
            _write_all(writer.fd, payload)
            self._sync_file(writer.fd)
        except Exception as error:
            self._roll_back(writer)
            if isinstance(error, OSError):
                raise StorageError(f"cannot append to {writer.path}: {error}") from error
            raise
        writer.size += len(payload)
        writer.cursor += count

    def _roll_back(self, writer: _Writer) -> None:
        # A failed write or fsync leaves an unknown part of the batch in the page
        # cache (and after a failed fsync the kernel may never retry it), so cut the
        # file back to what was durable; a later cursor() then reports the truth.
        # If even that fails, the next call re-reads the file from disk.
        try:
            os.ftruncate(writer.fd, writer.size)
            self._sync_file(writer.fd)
        except Exception:
            writer.broken = True

    def _ensure_directory(self) -> None:
        if self._directory_ready:
            return
        if not self.directory.is_dir():
            self.directory.mkdir(parents=True, exist_ok=True)
            self._sync_directory(self.directory.parent)
        self._directory_ready = True

    def _sync_directory(self, directory: Path) -> None:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            self._sync_dir(fd)
        finally:
            os.close(fd)

    def _list(self) -> _Summaries:
        summaries: _Summaries = []
        try:
            entries = sorted(os.listdir(self.directory))
        except FileNotFoundError:
            return summaries
        for name in entries:
            session_id = name.removesuffix(_SUFFIX)
            if session_id == name or SESSION_ID_PATTERN.fullmatch(session_id) is None:
                continue
            path = self.directory / name
            log = _read_log(path, session_id, parse_events=False)
            if log is not None:
                summaries.append(
                    StoredSummary(
                        id=session_id,
                        created_at=log.header.created_at,
                        length=log.length,
                        lineage=log.header.lineage,
                    )
                )
        return summaries


# -- format ------------------------------------------------------------------


def _line(text: str) -> bytes:
    return text.encode("utf-8") + b"\n"


def _lines(events: Sequence[SessionEvent]) -> bytes:
    # The UTF-8 bytes of `event.to_json()`, straight from the serializer: skipping the
    # str round trip halves the cost of a batch (tests pin the equality).
    parts = [_serialize(event) for event in events]
    parts.append(b"")
    return b"\n".join(parts)


def _state(stat: os.stat_result) -> _FileState:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _read_log_unless(path: Path, session_id: str, known: _FileState | None) -> _Read | None:
    """Read and validate the log unless its state is `known`; None if there is none.

    The state is taken before reading: a log only grows (or is cut back to what it
    held), so a later match means the bytes read then are the bytes there now.
    """
    with _storage_errors(path, "read"):
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            state = _state(os.fstat(fd))
            if state == known:
                return _Read(state, None)
            data = _read_all(fd)
        finally:
            os.close(fd)
    return _Read(state, _parse(path, session_id, data))


def _read_log(path: Path, session_id: str, *, parse_events: bool = True) -> _Log | None:
    with _storage_errors(path, "read"):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
    return _parse(path, session_id, data, parse_events=parse_events)


def _parse(path: Path, session_id: str, data: bytes, *, parse_events: bool = True) -> _Log:
    """Split and validate a log; the torn tail, if any, is excluded from the result."""
    valid_size = data.rfind(b"\n") + 1
    lines = data[:valid_size].split(b"\n")[:-1]
    torn = valid_size < len(data)
    if not torn and len(lines) > 1 and not _is_json(lines[-1]):
        torn = True
        valid_size -= len(lines.pop()) + 1
    if not lines:
        raise CorruptLog(path, 1, "no header line")
    header = _parse_header(path, session_id, lines[0])
    events: list[SessionEvent] = []
    if parse_events:
        with _collection_paused(len(lines) > _LONG_LOG):
            for seq, raw in enumerate(lines[1:]):
                events.append(_parse_event(path, seq, raw))
    return _Log(header, tuple(events), len(lines) - 1, torn, valid_size)


_LONG_LOG = 1_000


@contextmanager
def _collection_paused(pause: bool) -> Iterator[None]:
    """Pause cyclic garbage collection while a long log is decoded.

    Every decoded event is a handful of container objects that all survive, so
    the collector walks the growing heap again and again: about a third of
    resuming a 100k-event Session went there. Decoding creates no cycles, so
    nothing is lost by waiting. Only an enabled collector is paused and it is
    always re-enabled, so decoders in several threads may finish in any order.
    """
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _parse_header(path: Path, session_id: str, raw: bytes) -> SessionHeader:
    try:
        header = SessionHeader.from_json(raw)
    except ValidationError as error:
        raise CorruptLog(path, 1, f"invalid header: {describe(error, first_only=True)}") from None
    if header.id != session_id:
        raise CorruptLog(path, 1, f"header names session {header.id}, not {session_id}")
    return header


def _parse_event(path: Path, seq: int, raw: bytes) -> SessionEvent:
    line = seq + 2
    try:
        event = SessionEvent.from_json(raw)
    except ValidationError as error:
        raise CorruptLog(path, line, f"invalid event: {describe(error, first_only=True)}") from None
    if event.seq != seq:
        raise CorruptLog(path, line, f"event has seq {event.seq} where {seq} belongs")
    return event


def _is_json(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True


# -- file helpers --------------------------------------------------------------


@contextmanager
def _storage_errors(path: Path, action: str) -> Iterator[None]:
    try:
        yield
    except OSError as error:
        raise StorageError(f"cannot {action} {path}: {error}") from error


def _write_all(fd: int, payload: bytes) -> None:
    written = os.write(fd, payload)
    while written < len(payload):  # a short write: disk full soon, or a signal
        written += os.write(fd, memoryview(payload)[written:])


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)
