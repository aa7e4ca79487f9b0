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
2. **A started call is never abandoned.** The caller waits for it whatever
   cancels it meanwhile — anyio's cancellation (held back by a shielded
   scope) and a task's own `cancel()` (`asyncio.timeout`, `wait_for`: it
   passes anyio's shield, so the wait goes on through `asyncio.shield`) —
   and gets the cancellation once the call is done: a write that was handed
   over is known to have finished, or failed, before anyone acts on its
   outcome.
3. **One thread at a time, in the order of the calls.** The thread starts
   with the first call and ends at `close()`, after the calls made before
   it. A call after `close()` starts a new thread with a queue of its own,
   which waits for the old one to end before it runs anything. A forked
   child starts afresh: the parent's thread is not in it, and the calls the
   parent had queued are the parent's (`os.register_at_fork`). The threads
   are daemons, so a backend nobody closed never keeps the process from
   exiting.
4. **A call whose event loop is gone is run, and its outcome dropped.** The
   data is written as asked; there is nobody left to tell.

The thread holds the GIL only while it runs Python between system calls; the
disk waits happen with it released.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import anyio

__all__ = ["IoWorker"]

_T = TypeVar("_T")

# A call: what to run, and where its outcome goes (None: stop the thread).
_Call = tuple[Callable[..., Any], tuple[Any, ...], asyncio.AbstractEventLoop, asyncio.Future[Any]]
_Calls = queue.SimpleQueue[_Call | None]


class IoWorker:
    """One thread that runs a backend's mutating calls in order (see the module docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._starting = threading.Lock()
        self._calls: _Calls | None = None  # the queue of the thread serving now
        self._thread: threading.Thread | None = None  # the latest thread, until it ends
        _WORKERS.add(self)

    async def run(self, func: Callable[..., _T], *args: Any) -> _T:
        """`func(*args)` in the worker thread, after every call made before; its result, or
        its exception raised here."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        self._queue().put((func, args, loop, future))
        return await _outcome(future)

    def close(self) -> None:
        """End the thread once the calls made so far are done (rule 3); returns at once."""
        with self._starting:
            if self._calls is not None:
                self._calls.put(None)
                self._calls = None

    @property
    def running(self) -> bool:
        """Whether a thread takes calls now (a closed one may still be finishing)."""
        return self._calls is not None

    def _queue(self) -> _Calls:
        with self._starting:
            if self._calls is None:
                calls: _Calls = queue.SimpleQueue()
                thread = threading.Thread(
                    target=_serve, args=(calls, self._thread), name=self.name, daemon=True
                )
                thread.start()
                self._calls, self._thread = calls, thread
            return self._calls

    def _forget_parent(self) -> None:
        # In a forked child: nothing of the parent's thread, its queue or its lock is ours.
        self._starting = threading.Lock()
        self._calls = None
        self._thread = None


def _serve(calls: _Calls, before: threading.Thread | None) -> None:
    if before is not None:  # the thread closed before this one: its calls come first
        before.join()
    while (call := calls.get()) is not None:
        func, args, loop, future = call
        try:
            outcome: tuple[bool, Any] = (True, func(*args))
        except BaseException as error:  # handed back to the caller, whatever it is
            outcome = (False, error)
        # An event loop that is closed raises: nobody waits for this outcome (rule 4).
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, future, outcome)


async def _outcome(future: asyncio.Future[_T]) -> _T:
    """The outcome of the call behind `future`, once it is done, whatever cancels the
    caller meanwhile; a cancellation is raised after the call is done (rule 2)."""
    with anyio.CancelScope(shield=True):  # anyio's cancellation waits outside
        try:
            result = await asyncio.shield(future)
        except asyncio.CancelledError:
            # A task's own `cancel()` passes anyio's shield: wait on (`wait` neither
            # cancels the future nor raises its exception), then let it go on.
            while not future.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait((future,))
            raise
    return result


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    succeeded, value = outcome
    if succeeded:
        future.set_result(value)
    elif isinstance(value, StopIteration):  # a future refuses it: it would end a generator
        error = RuntimeError(f"the call raised StopIteration ({value!r})")
        error.__cause__ = value
        future.set_exception(error)
    else:
        future.set_exception(value)


_WORKERS: weakref.WeakSet[IoWorker] = weakref.WeakSet()


def _forked() -> None:
    for worker in list(_WORKERS):
        worker._forget_parent()


os.register_at_fork(after_in_child=_forked)
