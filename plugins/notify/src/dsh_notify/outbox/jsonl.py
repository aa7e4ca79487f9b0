"""`JsonlOutbox`: the outbox of a JSONL store, one file beside the wake index.

`<data-dir>/notify-outbox.jsonl` (version 1; UTF-8, one JSON object per
`\\n`-terminated line, mode 0600):

    {"format": "dsh-notify-outbox", "version": 1}
    {"pruned": 12}
    {"put": {"channel": "apprise", "target": "apprise:0:1a2b3c4d", "message": {…},
             "state": "pending", "attempts": 0, "next_at": 17…, "error": null, …}}

Rules:

1. Each line after the header is one change: `put` keeps a delivery whole
   under its key (the last one wins), `pruned` sets the pruned count.
2. Each `add` and each `settle` appends its lines with one write and one
   fsync, in one worker thread (never on the event loop), and changes the
   memory state only once the write returned: what `counts` reports, and
   what was acknowledged, is on disk.
3. A torn last line (no newline, or not JSON) is what a crash mid-write
   leaves: it is cut off at open. Any other malformed line makes the file
   unusable: it is moved aside (`notify-outbox.jsonl.unreadable-<time>`,
   kept, never deleted), the outbox starts empty and the log says so — the
   alerts are kept by the Host, the deliveries lost with the file are not
   made up for.
4. Open compacts (a snapshot: temp file, fsync, rename, fsync of the
   directory) a file of more than `COMPACT_FACTOR` lines per kept delivery,
   and so does pruning (`OutboxBackend` rule 4), which waits until `keep`
   is exceeded by a quarter so that it rewrites the file rarely.
5. One host owns a data dir (`dsh web` locks it), so claims are in memory.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from pydantic import ValidationError

from dsh import StorageError

from .backend import KEEP_FINISHED
from .delivery import Delivery
from .state import OutboxState, StateOutbox

__all__ = ["COMPACT_FACTOR", "FILE_NAME", "FORMAT", "VERSION", "JsonlOutbox"]

log = logging.getLogger(__name__)

FILE_NAME = "notify-outbox.jsonl"
FORMAT = "dsh-notify-outbox"
VERSION = 1
COMPACT_MIN_LINES = 1024
COMPACT_FACTOR = 4
_MODE = 0o600
_T = TypeVar("_T")
Sync = Callable[[int], None]


class _Unusable(Exception):
    """The file is not an outbox of this format; the message says why."""


def _line(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _apply(state: OutboxState, raw: bytes) -> None:
    record = json.loads(raw)
    if type(record) is not dict or len(record) != 1:
        raise _Unusable("not an outbox record")
    if "pruned" in record and type(record["pruned"]) is int and record["pruned"] >= 0:
        state.pruned = record["pruned"]
    elif "put" in record:
        try:
            state.put(Delivery.from_json(record["put"]))
        except ValidationError as error:
            raise _Unusable(f"not a delivery ({error.error_count()} problems)") from None
    else:
        raise _Unusable("not an outbox record")


def parse(payload: bytes, keep: int) -> tuple[OutboxState, int, int]:
    """`(state, lines, valid size)` of a file's bytes; `_Unusable` if it is not one."""
    lines = payload.split(b"\n")
    try:
        header = json.loads(lines[0])
    except ValueError:
        raise _Unusable("line 1 is not its header") from None
    if header != {"format": FORMAT, "version": VERSION} or len(lines) == 1:
        raise _Unusable(f"line 1 is not the header of {FORMAT} version {VERSION}")
    state = OutboxState(keep)
    valid = len(lines[0]) + 1
    complete = lines[1:-1]
    for number, raw in enumerate(complete, start=2):
        try:
            _apply(state, raw)
        except ValueError:
            if number == len(lines) - 1:
                break  # the last line is not JSON: torn by a crash
            raise _Unusable(f"line {number} is not JSON") from None
        except _Unusable as error:
            raise _Unusable(f"line {number}: {error}") from None
        valid += len(raw) + 1
    return state, len(complete) + 1, valid


def snapshot(state: OutboxState) -> bytes:
    parts = [_line({"format": FORMAT, "version": VERSION}), _line({"pruned": state.pruned})]
    parts.extend(_line({"put": d.to_json()}) for _, d in sorted(state.deliveries.items()))
    return b"".join(parts)


class JsonlOutbox(StateOutbox):
    """Deliveries in `<data_dir>/notify-outbox.jsonl` (see the module docstring).

    `sync` replaces every fsync (file and directory), for tests that inject
    faults at the durability point.
    """

    def __init__(
        self, data_dir: Path | str, *, keep: int = KEEP_FINISHED, sync: Sync | None = None
    ) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / FILE_NAME
        self.description = f"the notify outbox {self.path}"
        self.state = OutboxState(keep)
        self._keep = keep
        self._sync: Sync = sync or os.fsync
        self._fd: int | None = None
        self._lines = 0
        self._size = 0  # bytes of complete lines
        self._torn = False  # a failed write may have left a part after them
        self._opened = False
        self._limiter = CapacityLimiter(1)

    async def open(self) -> None:
        await self._run(self._open)

    async def add(self, deliveries: Sequence[Delivery]) -> int:
        await self.open()
        fresh = self.state.new(deliveries)
        if fresh:
            await self._run(self._append, [_line({"put": d.to_json()}) for d in fresh])
            for delivery in fresh:
                self.state.put(delivery)
        return len(fresh)

    async def claim(
        self, channel: str, now: int, limit: int, *, skip: Collection[str] = ()
    ) -> list[Delivery]:
        await self.open()
        return self.state.claim(channel, now, limit, skip)

    async def settle(self, delivery: Delivery) -> bool:
        if not self.state.settles(delivery):
            return False
        await self._run(self._append, [_line({"put": delivery.to_json()})])
        self.state.settle(delivery)
        if self.state.over(slack=self._keep // 4):
            self.state.prune()
            await self._run(self._replace)
        return True

    async def aclose(self) -> None:
        await self._run(self._close)

    # -- in the worker thread ----------------------------------------------------------

    def _open(self) -> None:
        if self._opened:
            return
        try:
            # O_NONBLOCK: a FIFO under the file's name fails to read rather than waiting forever.
            flags = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            fd = os.open(self.path, flags)
        except FileNotFoundError:
            self._opened = True
            return  # none yet: the first write makes it
        except OSError as error:
            raise StorageError(f"cannot open {self.description}: {error}") from error
        try:
            state, lines, valid = parse(_read_all(fd), self._keep)
            os.ftruncate(fd, valid)  # a torn tail
        except _Unusable as error:
            os.close(fd)
            self._set_aside(str(error))
            self._opened = True
            return
        except OSError as error:
            os.close(fd)
            raise StorageError(f"cannot read {self.description}: {error}") from error
        self.state, self._fd, self._lines, self._size = state, fd, lines, valid
        self._opened = True
        dropped = state.prune()
        if dropped or lines > max(COMPACT_MIN_LINES, COMPACT_FACTOR * len(state.deliveries)):
            self._replace()

    def _set_aside(self, reason: str) -> None:
        aside = self.path.with_name(f"{FILE_NAME}.unreadable-{time.time_ns()}")
        try:
            os.replace(self.path, aside)
            self._sync_directory()
        except OSError as error:
            problem = f"{self.path} cannot be read ({reason}) nor moved aside: {error}"
            raise StorageError(problem) from error
        log.error(
            "%s cannot be read (%s): moved to %s; the outbox starts empty", self.path, reason, aside
        )

    def _append(self, lines: list[bytes]) -> None:
        if self._fd is None:
            self._replace(b"".join(lines))
            return
        payload = b"".join(lines)
        try:
            if self._torn:
                os.ftruncate(self._fd, self._size)
                self._torn = False
            _write_all(self._fd, payload)
            self._sync(self._fd)
        except OSError as error:
            self._torn = True  # a part may be there: cut it before the next append
            raise StorageError(f"cannot write {self.description}: {error}") from error
        self._lines += len(lines)
        self._size += len(payload)

    def _replace(self, extra: bytes = b"") -> None:
        """Write the state (and `extra` lines after it) as the whole file, atomically."""
        payload = snapshot(self.state) + extra
        temp = self.path.with_name(f".{FILE_NAME}.{secrets.token_hex(6)}.tmp")
        try:
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
            fd = os.open(temp, flags, _MODE)
            try:
                _write_all(fd, payload)
                self._sync(fd)
                os.replace(temp, self.path)
                self._sync_directory()
            except BaseException:
                os.close(fd)
                raise
        except OSError as error:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise StorageError(f"cannot write {self.description}: {error}") from error
        self._close()
        self._fd, self._lines, self._size = fd, payload.count(b"\n"), len(payload)
        self._torn = False

    def _sync_directory(self) -> None:
        fd = os.open(self.data_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            self._sync(fd)
        finally:
            os.close(fd)

    def _close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    async def _run(self, func: Callable[..., _T], *args: Any) -> _T:
        return await anyio.to_thread.run_sync(func, *args, limiter=self._limiter)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]
