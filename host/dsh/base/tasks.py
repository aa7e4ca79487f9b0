"""A `TaskSet`: tasks owned by one object but run in a longer-lived task group.

The Host owns the process-wide anyio task group. An Agent (or a plugin's owner)
owns a `TaskSet` on top of it: every task it starts runs inside that group in
its own cancel scope, and `aclose()` cancels all of them and waits until each
has finished. This keeps structured ownership without giving every Agent a
task of its own just to hold a task group open.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup

from .errors import TaskSetClosed

__all__ = ["TaskSet", "TaskSetClosed"]

log = logging.getLogger(__name__)


class TaskSet:
    """Cancellable, awaitable tasks started in a shared task group."""

    def __init__(self, group: TaskGroup, name: str = "tasks") -> None:
        self._group = group
        self.name = name
        # Each running task's cancel scope, mapped to its anyio task id once it starts.
        self._scopes: dict[anyio.CancelScope, int | None] = {}
        self._closed = False
        self._waiters: list[tuple[anyio.Event, anyio.CancelScope | None]] = []

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        return len(self._scopes)

    def start_soon(
        self, func: Callable[..., Awaitable[Any]], *args: Any, name: str | None = None
    ) -> anyio.CancelScope:
        """Start `func(*args)`; returns the cancel scope that stops just this task.

        An exception escaping `func` is logged with its traceback and does not
        cancel sibling tasks: each owner contains its own failures. Raises
        `TaskSetClosed` once `aclose()` has been called.
        """
        if self._closed:
            raise TaskSetClosed(f"{self.name} is closed")
        scope = anyio.CancelScope()
        self._scopes[scope] = None
        self._group.start_soon(self._run, scope, func, args, name=name or self.name)
        return scope

    async def _run(
        self, scope: anyio.CancelScope, func: Callable[..., Awaitable[Any]], args: tuple[Any, ...]
    ) -> None:
        self._scopes[scope] = anyio.get_current_task().id
        try:
            with scope:
                await func(*args)
        except Exception:
            log.exception("%s: task %r failed", self.name, func)
        finally:
            del self._scopes[scope]
            self._wake_closers()

    def _wake_closers(self) -> None:
        for waiter in list(self._waiters):
            done, own = waiter
            if all(scope is own for scope in self._scopes):
                self._waiters.remove(waiter)
                done.set()

    async def aclose(self) -> None:
        """Cancel every task and wait until all have finished. Idempotent.

        Called from inside one of this set's own tasks, it cancels that task
        too but does not wait for it (a task cannot outlive its own wait). The
        wait is shielded: a cancelled closer still lets every task finish.
        """
        self._closed = True
        current = anyio.get_current_task().id
        own = next((scope for scope, task in self._scopes.items() if task == current), None)
        for scope in list(self._scopes):
            scope.cancel()
        if all(scope is own for scope in self._scopes):
            return
        done = anyio.Event()
        self._waiters.append((done, own))
        with anyio.CancelScope(shield=True):
            await done.wait()
