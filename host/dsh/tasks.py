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

__all__ = ["TaskSet", "TaskSetClosed"]

log = logging.getLogger(__name__)


class TaskSetClosed(RuntimeError):
    """Raised when starting a task in a TaskSet that is closed."""


class TaskSet:
    """Cancellable, awaitable tasks started in a shared task group."""

    def __init__(self, group: TaskGroup, name: str = "tasks") -> None:
        self._group = group
        self.name = name
        self._scopes: set[anyio.CancelScope] = set()
        self._closed = False
        self._drained: anyio.Event | None = None

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
        cancel sibling tasks: each owner contains its own failures.
        """
        if self._closed:
            raise TaskSetClosed(f"{self.name} is closed")
        scope = anyio.CancelScope()
        self._scopes.add(scope)
        self._group.start_soon(self._run, scope, func, args, name=name or self.name)
        return scope

    async def _run(
        self, scope: anyio.CancelScope, func: Callable[..., Awaitable[Any]], args: tuple[Any, ...]
    ) -> None:
        try:
            with scope:
                await func(*args)
        except Exception:
            log.exception("%s: task %r failed", self.name, func)
        finally:
            self._scopes.discard(scope)
            if not self._scopes and self._drained is not None:
                self._drained.set()

    async def aclose(self) -> None:
        """Cancel every task and wait until all have finished. Idempotent."""
        self._closed = True
        if not self._scopes:
            return
        if self._drained is None:
            self._drained = anyio.Event()
        for scope in list(self._scopes):
            scope.cancel()
        with anyio.CancelScope(shield=True):
            await self._drained.wait()
