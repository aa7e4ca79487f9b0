"""`IoWorker`: the one thread a JSONL backend's mutations run in, one after another.

Every create, append round, release, trash and restore of one backend is a
call to `run()`: handed to the thread the moment it is made, run in the order
made, its result or exception handed back to the event loop that waits for
it. The rules:

1. **No pass of the event loop before the hand-over.** `run()` puts the call
   on the thread's queue before it first awaits. (`anyio.to_thread.run_sync`
   behind a limiter of one, which this replaces, first lets the event loop
   run once; the group commit spends that pass itself, gathering the appends
   made meanwhile into the round: `JsonlBackend`, rule 2.)
2. **A started call is never abandoned.** The caller waits for it shielded
   from cancellation, which it gets at its next await once the call is done:
   a write that was handed over is known to have finished, or failed, before
   anyone acts on its outcome.
3. **The thread lives while there is work, and ends with the backend.**
   It starts with the first call and ends at `close()` (after the calls made
   before it); a call after that, or in a forked child (which has no copy of
   the thread), starts a new one. It is a daemon thread, so a
   backend nobody closed never keeps the process from exiting.
4. **A call whose event loop is gone is run, and its outcome dropped.** The
   data is written as asked; there is nobody left to tell.

The thread holds the GIL only while it runs Python between system calls; the
disk waits happen with it released.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio

__all__ = ["IoWorker"]

_T = TypeVar("_T")

# A call: what to run, and where its outcome goes (None: stop the thread).
_Call = tuple[Callable[..., Any], tuple[Any, ...], asyncio.AbstractEventLoop, asyncio.Future[Any]]


class IoWorker:
    """One thread that runs a backend's mutating calls in order (see the module docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._starting = threading.Lock()

    async def run(self, func: Callable[..., _T], *args: Any) -> _T:
        """`func(*args)` in the worker thread, after every call made before; its result, or
        its exception raised here."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        self._ensure_thread()
        self._calls.put((func, args, loop, future))
        with anyio.CancelScope(shield=True):  # rule 2
            result = await future
        return result

    def close(self) -> None:
        """End the thread once the calls made so far are done (rule 3); returns at once."""
        with self._starting:
            if self._thread is not None:
                self._calls.put(None)
                self._thread = None

    @property
    def running(self) -> bool:
        """Whether a thread is serving calls (or finishing them before it ends)."""
        return self._thread is not None

    def _ensure_thread(self) -> None:
        with self._starting:
            # Not alive without `close()`: the process forked (a child has no copy of
            # the thread), so calls left on the queue wait for a new one.
            if self._thread is None or not self._thread.is_alive():
                thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
                thread.start()
                self._thread = thread

    def _serve(self) -> None:
        calls = self._calls
        while (call := calls.get()) is not None:
            func, args, loop, future = call
            try:
                outcome: tuple[bool, Any] = (True, func(*args))
            except BaseException as error:  # handed back to the caller, whatever it is
                outcome = (False, error)
            # An event loop that is closed raises: nobody waits for this outcome (rule 4).
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, future, outcome)


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():  # the loop cancelled it while shutting down
        return
    succeeded, value = outcome
    if succeeded:
        future.set_result(value)
    else:
        future.set_exception(value)
