"""Fault injection for persistence: a scriptable wrapper around any `Backend`.

`FaultyBackend(inner)` forwards every call to `inner` and lets a test script
what goes wrong, by operation and call number (1-based, counted per operation
since the wrapper was made, or per operation and Session with `session_id=`):

    backend = FaultyBackend(MemoryBackend())
    backend.fail("initialize")                      # the next initialize fails, nothing stored
    backend.fail("append", nth=2, after_write=True) # the 2nd append is stored, then reports failure
    backend.fail("cursor", times=None)              # every cursor from now on fails
    backend.fail("append", session_id="s2")         # the next append to s2 fails
    hold = backend.hold("append")                   # the next append pauses until released
    await hold.entered.wait(); ...; hold.release()

`after_write=False` raises before the inner call (storage unchanged);
`after_write=True` performs the real call and then raises, as a commit whose
acknowledgement was lost. The default error is `InjectedFault` (a
`StorageError`); pass `error=` to raise something else.

Every `Backend` method is an operation: `initialize`, `append`, `cursor`,
`mark`, `header`, `read`, `inspect`, `list`, `release`, `trash`, `restore`.

`FaultyBackend.jsonl(data_dir)` wraps a real `JsonlBackend` whose every fsync
(of the log, of a new file, of the directory) goes through the script as the
operation `"sync"`: `fail("sync", nth=…)` raises `OSError(EIO)` before the
real fsync (the data reached the page cache but is not durable) or after it.
"""

from __future__ import annotations

import errno
import os
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

import anyio

from ..persistence.backend import (
    Backend,
    Events,
    LogMark,
    SessionIds,
    StoredSession,
    StoredSummary,
)
from ..persistence.errors import StorageError
from ..persistence.jsonl import JsonlBackend
from ..session.event import SessionEvent
from ..session.header import SessionHeader

__all__ = ["Fault", "FaultyBackend", "Hold", "InjectedFault", "Operation"]

Operation = Literal[
    "initialize",
    "append",
    "sync",
    "cursor",
    "mark",
    "header",
    "read",
    "inspect",
    "list",
    "release",
    "trash",
    "restore",
]
_OPERATIONS: tuple[str, ...] = get_args(Operation)
_T = TypeVar("_T")


class InjectedFault(StorageError):
    """The failure a scripted `Fault` raises by default."""


@dataclass
class Fault:
    """A scripted failure of calls `nth … nth + times - 1` of one operation.

    With `session_id`, only calls for that Session count. `times=None` fails
    every call from `nth` on. `fired` counts the failures raised so far.
    """

    operation: Operation
    nth: int
    times: int | None
    after_write: bool
    error: Exception | None
    session_id: str | None = None
    fired: int = 0

    def covers(self, call: int) -> bool:
        return call >= self.nth and (self.times is None or call < self.nth + self.times)

    def exception(self, call: int) -> Exception:
        self.fired += 1
        if self.error is not None:
            return self.error
        when = "after it took effect" if self.after_write else "before it took effect"
        if self.operation == "sync":
            return OSError(errno.EIO, f"injected fault: sync call #{call} failed {when}")
        return InjectedFault(f"injected fault: {self.operation} call #{call} failed {when}")


@dataclass
class Hold:
    """A paused call: `entered` is set when it reaches the hold; `release()` lets it go on."""

    operation: Operation
    nth: int
    after_write: bool
    session_id: str | None = None
    entered: anyio.Event = field(default_factory=anyio.Event)
    _released: anyio.Event = field(default_factory=anyio.Event)

    def release(self) -> None:
        self._released.set()

    async def _pause(self) -> None:
        self.entered.set()
        await self._released.wait()


class FaultyBackend(Backend):
    """A `Backend` that fails or pauses scripted calls and forwards the rest to `inner`."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()
        self.session_calls: Counter[tuple[str, str]] = Counter()
        self._faults: list[Fault] = []
        self._holds: list[Hold] = []
        self._has_sync = False
        self._count_lock = threading.Lock()  # "sync" may be counted from a worker thread

    @classmethod
    def jsonl(cls, data_dir: Path | str, **options: Any) -> FaultyBackend:
        """A wrapped `JsonlBackend` (`options` go to it) whose fsyncs are the scriptable
        operation `"sync"`."""
        wrapper: FaultyBackend | None = None

        def sync(fd: int) -> None:
            assert wrapper is not None
            wrapper._sync(fd)

        wrapper = cls(JsonlBackend(data_dir, sync=sync, **options))
        wrapper._has_sync = True
        return wrapper

    # -- scripting ------------------------------------------------------------

    def fail(
        self,
        operation: Operation,
        *,
        nth: int | None = None,
        times: int | None = 1,
        after_write: bool = False,
        error: Exception | None = None,
        session_id: str | None = None,
    ) -> Fault:
        """Fail call `nth` (default: the next one) of `operation`, `times` calls in a row."""
        if operation == "sync" and not self._has_sync:
            raise ValueError("this backend has no sync point; build it with FaultyBackend.jsonl()")
        if times is not None and times < 1:
            raise ValueError(f"times must be at least 1 (or None for always), not {times}")
        call = self._next_call(operation, nth, session_id)
        fault = Fault(operation, call, times, after_write, error, session_id)
        self._faults.append(fault)
        return fault

    def hold(
        self,
        operation: Operation,
        *,
        nth: int | None = None,
        after_write: bool = False,
        session_id: str | None = None,
    ) -> Hold:
        """Pause call `nth` (default: the next one) of `operation` until `release()`."""
        if operation == "sync":
            raise ValueError("a sync runs synchronously and cannot be held; hold the append")
        call = self._next_call(operation, nth, session_id)
        hold = Hold(operation, call, after_write, session_id)
        self._holds.append(hold)
        return hold

    def clear(self) -> None:
        """Forget every scripted fault and release every hold."""
        self._faults.clear()
        for hold in self._holds:
            hold.release()
        self._holds.clear()

    def _next_call(self, operation: Operation, nth: int | None, session_id: str | None) -> int:
        if operation not in _OPERATIONS:
            raise ValueError(f"unknown operation {operation!r}; expected one of {_OPERATIONS}")
        if session_id is not None and operation in ("sync", "list"):
            raise ValueError(f"{operation} is not about one session; drop session_id")
        done = self._count(operation, session_id)
        if nth is None:
            return done + 1
        if nth <= done:
            raise ValueError(f"{operation} call #{nth} already happened ({done} so far)")
        return nth

    def _count(self, operation: str, session_id: str | None) -> int:
        if session_id is None:
            return self.calls[operation]
        return self.session_calls[operation, session_id]

    def _start(
        self, operation: Operation, session_id: str | None = None
    ) -> tuple[int, Fault | None, Hold | None]:
        with self._count_lock:
            self.calls[operation] += 1
            call = self.calls[operation]
            if session_id is not None:
                self.session_calls[operation, session_id] += 1
            session_call = self.session_calls[operation, session_id] if session_id else None

        def number(scope: str | None) -> int | None:
            """This call's number as counted by a fault or hold scoped to `scope`."""
            if scope is None:
                return call
            return session_call if scope == session_id else None

        fault = next(
            (
                f
                for f in self._faults
                if f.operation == operation
                and (n := number(f.session_id)) is not None
                and f.covers(n)
            ),
            None,
        )
        hold = next(
            (h for h in self._holds if h.operation == operation and number(h.session_id) == h.nth),
            None,
        )
        return call, fault, hold

    async def _call(
        self,
        operation: Operation,
        run: Callable[[], Awaitable[_T]],
        session_id: str | None = None,
    ) -> _T:
        call, fault, hold = self._start(operation, session_id)
        if hold is not None and not hold.after_write:
            await hold._pause()
        if fault is not None and not fault.after_write:
            raise fault.exception(call)
        result = await run()
        if hold is not None and hold.after_write:
            await hold._pause()
        if fault is not None and fault.after_write:
            raise fault.exception(call)
        return result

    def _sync(self, fd: int) -> None:
        call, fault, _ = self._start("sync")
        if fault is not None and not fault.after_write:
            raise fault.exception(call)
        os.fsync(fd)
        if fault is not None and fault.after_write:
            raise fault.exception(call)

    # -- Backend ----------------------------------------------------------------

    async def initialize(self, header: SessionHeader, events: Sequence[SessionEvent]) -> None:
        await self._call("initialize", lambda: self.inner.initialize(header, events), header.id)

    async def append(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        await self._call("append", lambda: self.inner.append(session_id, events), session_id)

    async def cursor(self, session_id: str) -> int | None:
        return await self._call("cursor", lambda: self.inner.cursor(session_id), session_id)

    async def mark(self, session_id: str) -> LogMark | None:
        return await self._call("mark", lambda: self.inner.mark(session_id), session_id)

    async def header(self, session_id: str) -> SessionHeader | None:
        return await self._call("header", lambda: self.inner.header(session_id), session_id)

    async def read(
        self,
        session_id: str,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
    ) -> Events:
        return await self._call(
            "read", lambda: self.inner.read(session_id, start, stop, types=types), session_id
        )

    async def inspect(self, session_id: str) -> StoredSession | None:
        return await self._call("inspect", lambda: self.inner.inspect(session_id), session_id)

    async def list(self) -> list[StoredSummary]:
        return await self._call("list", self.inner.list)

    async def release(self, session_id: str) -> None:
        await self._call("release", lambda: self.inner.release(session_id), session_id)

    async def trash(self, session_id: str) -> None:
        await self._call("trash", lambda: self.inner.trash(session_id), session_id)

    async def restore(self, session_id: str) -> None:
        await self._call("restore", lambda: self.inner.restore(session_id), session_id)

    async def trashed(self) -> SessionIds:
        return await self.inner.trashed()

    async def inspect_trashed(self, session_id: str) -> StoredSession | None:
        return await self.inner.inspect_trashed(session_id)

    async def aclose(self) -> None:
        self.clear()
        await self.inner.aclose()
