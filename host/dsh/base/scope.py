"""Scopes: ordered, awaited disposal of registrations.

Every registration in dsh returns a *disposer* (a callable, sync or async) and
the caller puts it in a `Scope`. Closing the scope runs each disposer once,
newest first, awaiting async ones; a failing disposer does not stop the others,
and all failures are re-raised together afterwards. Scopes nest (`child()`),
and an installation scope (`Scope.joint(agent_scope, plugin_scope)`) closes
when either of its two parents closes. Disposal never deletes durable records.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable

import anyio

from .errors import ScopeClosed, raise_errors

__all__ = ["Disposer", "Scope", "dispose"]

log = logging.getLogger(__name__)

Disposer = Callable[[], Awaitable[None] | None]


class Scope:
    """A stack of disposers closed once, newest first."""

    def __init__(self, name: str = "scope") -> None:
        self.name = name
        self._disposers: list[Disposer] = []
        self._closing = False
        self._done = False
        # Made only if a second closer waits: an open scope holds no event object.
        self._closed: anyio.Event | None = None

    @property
    def closed(self) -> bool:
        """True once closing has begun; nothing more can be added."""
        return self._closing

    def __len__(self) -> int:
        """How many disposers are registered and not yet run."""
        return len(self._disposers)

    def add(self, disposer: Disposer) -> Disposer:
        """Register `disposer`; returns it. Raises `ScopeClosed` if closing began."""
        if self._closing:
            raise ScopeClosed(f"{self.name} is closed; cannot register {disposer!r}")
        self._disposers.append(disposer)
        return disposer

    def discard(self, disposer: Disposer) -> None:
        """Forget `disposer` without running it (it was disposed some other way)."""
        with contextlib.suppress(ValueError):
            self._disposers.remove(disposer)

    def child(self, name: str | None = None) -> Scope:
        """A scope closed with this one (or earlier, on its own)."""
        return Scope.joint(self, name=name or f"{self.name}/child")

    @staticmethod
    def joint(*parents: Scope, name: str = "installation") -> Scope:
        """A scope that closes when any of `parents` closes.

        Closing it on its own detaches it from every parent, so parents never
        hold closed children. Raises `ScopeClosed` (and registers nothing) if
        any parent is already closing.
        """
        scope = Scope(name)
        joined: list[Scope] = []
        try:
            for parent in parents:
                parent.add(scope.aclose)
                joined.append(parent)
        except ScopeClosed:
            for parent in joined:
                parent.discard(scope.aclose)
            raise

        scope.add(_Detach(parents, scope))
        return scope

    async def aclose(self) -> None:
        """Run every disposer once, newest first; re-raise failures afterwards.

        A second call waits for the first to finish. Disposal is shielded from
        cancellation so that teardown always completes.
        """
        if self._closing:
            if not self._done:
                if self._closed is None:
                    self._closed = anyio.Event()
                await self._closed.wait()
            return
        self._closing = True
        errors: list[Exception] = []
        with anyio.CancelScope(shield=True):
            while self._disposers:
                disposer = self._disposers.pop()
                try:
                    await dispose(disposer)
                except Exception as error:  # every disposer runs; report all below
                    log.debug("%s: disposer %r failed", self.name, disposer, exc_info=True)
                    errors.append(error)
        self._done = True
        if self._closed is not None:
            self._closed.set()
        raise_errors(errors, f"{self.name}: {len(errors)} disposers failed")


class _Detach:
    """A joint scope's last disposer: forget it in every parent (slotted, not a
    closure: every installation keeps one)."""

    __slots__ = ("_parents", "_scope")

    def __init__(self, parents: tuple[Scope, ...], scope: Scope) -> None:
        self._parents = parents
        self._scope = scope

    def __call__(self) -> None:
        for parent in self._parents:
            parent.discard(self._scope.aclose)


async def dispose(disposer: Disposer) -> None:
    """Run `disposer`, awaiting what it returns when that is awaitable."""
    result = disposer()
    if inspect.isawaitable(result):
        await result
