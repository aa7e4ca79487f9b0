"""The host side of leases: acquire before going live, renew, close what is lost.

`LeaseKeeper` is the one place a Host deals with Session ownership
(`dsh.persistence.leases` says what a lease is). Whatever the store:

1. `acquire(id)` takes the Session's lease before the Session goes live —
   before a resume reads the stored log — and remembers it;
2. while leases expire (`store.ttl` is not None), one renewal task in the
   Host's task group renews every held lease in one call every
   `renew_seconds`;
3. a lease is **lost** when a renewal leaves it out, or when no renewal
   succeeded for `ttl` seconds since the last successful one *started*
   (measured on this host's monotonic clock, so the database's expiry, set
   after that start, always lies later: this host gives a Session up
   before any other host may take it over). A lost lease is forgotten and
   `on_lost(id)` is called at once, in its own task; the Host closes that
   Session there (its agent and its plugins' owners stop);
4. `release(id)` ends a lease when its Session closes normally.

A renewal that fails is logged once per episode of failures, not per
attempt. With `LocalLeases` (one process) nothing expires and no task runs.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ..base.clock import Clock, SystemClock
from ..persistence.leases import (
    DEFAULT_LEASE_RENEW_SECONDS,
    DEFAULT_LEASE_TTL_SECONDS,
    MAX_LEASE_SECONDS,
    Lease,
    LeaseBackend,
)

__all__ = ["LeaseKeeper", "LeaseSettings"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LeaseSettings:
    """How long a Host's leases last without renewal (`ttl_seconds`, for stores whose
    leases expire) and how often it renews them (`renew_seconds`, less than the TTL).

    The overlay's `[store]` table sets them (`lease_ttl_seconds`,
    `lease_renew_seconds`). After a host dies, its Sessions can be taken over
    once their leases expire: at most `ttl_seconds` after its last renewal.
    """

    ttl_seconds: float = DEFAULT_LEASE_TTL_SECONDS
    renew_seconds: float = DEFAULT_LEASE_RENEW_SECONDS

    def __post_init__(self) -> None:
        for name in ("ttl_seconds", "renew_seconds"):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0 < value <= MAX_LEASE_SECONDS):
                raise ValueError(
                    f"lease {name} must be more than 0 and at most {MAX_LEASE_SECONDS:g}, "
                    f"not {value}"
                )
        if self.renew_seconds >= self.ttl_seconds:
            raise ValueError(
                f"leases must be renewed more often than they expire: renewal every "
                f"{self.renew_seconds:g} s is not less than the TTL of {self.ttl_seconds:g} s"
            )


@dataclass(slots=True)
class _Held:
    lease: Lease
    valid_until: float  # on the keeper's monotonic clock


class LeaseKeeper:
    """Holds one Host's leases (see the module docstring).

    `clock` drives the waits; its `monotonic()`, when it has one (the
    system clock and `FakeClock` do), measures how long a lease is safe.
    """

    def __init__(
        self,
        backend: LeaseBackend,
        group: TaskGroup,
        on_lost: Callable[[str], Coroutine[Any, Any, None]],
        *,
        clock: Clock | None = None,
        settings: LeaseSettings | None = None,
    ) -> None:
        self.backend = backend
        self.settings = settings or LeaseSettings()
        self._clock: Clock = clock or SystemClock()
        self._now: Callable[[], float] = getattr(self._clock, "monotonic", time.monotonic)
        self._group = group
        self._on_lost = on_lost
        self._held: dict[str, _Held] = {}
        self._running = False
        self._closed = False
        self._failing = 0
        self._wake = anyio.Event()
        self._sleeping: anyio.CancelScope | None = None
        self.renewals = 0  # successful renewal rounds (for tests and diagnostics)

    @property
    def expires(self) -> bool:
        return self.backend.ttl is not None

    def holds(self, session_id: str) -> bool:
        return session_id in self._held

    def lease(self, session_id: str) -> Lease | None:
        held = self._held.get(session_id)
        return None if held is None else held.lease

    async def acquire(self, session_id: str) -> Lease:
        """Take the Session's lease (raises what `LeaseBackend.acquire` raises)."""
        started = self._now()
        lease = await self.backend.acquire(session_id)
        ttl = self.backend.ttl
        self._held[session_id] = _Held(lease, math.inf if ttl is None else started + ttl)
        if self.expires and not self._running and not self._closed:
            self._running = True
            self._group.start_soon(self._run, name="lease renewal")
        self._wake.set()
        return lease

    async def release(self, session_id: str) -> None:
        """End the Session's lease, if this keeper holds it. A failure is logged: the
        lease then simply expires."""
        held = self._held.pop(session_id, None)
        if held is None:
            return
        try:
            with anyio.CancelScope(shield=True):
                await self.backend.release(held.lease)
        except Exception as error:
            log.warning(
                "session %s: releasing its lease failed (it expires on its own): %s",
                session_id,
                error,
            )

    def close(self) -> None:
        """Stop renewing (the Host is closing; its Sessions release their leases)."""
        self._closed = True
        self._wake.set()
        if self._sleeping is not None:
            self._sleeping.cancel()

    # -- renewal --------------------------------------------------------------

    async def _run(self) -> None:
        try:
            while not self._closed:
                if not self._held:
                    await self._wake.wait()
                    self._wake = anyio.Event()
                    continue
                with anyio.CancelScope() as self._sleeping:
                    await self._clock.sleep(self._next_wait())
                self._sleeping = None
                if self._closed:
                    break
                if not self._held:
                    continue  # all released while it slept: nothing to renew, nothing can run out
                async with anyio.create_task_group() as bounded:
                    # A renewal that hangs (a partitioned network) must not keep this
                    # host writing past its leases: it is abandoned at the deadline.
                    bounded.start_soon(self._abandon_at_deadline, bounded.cancel_scope)
                    await self._renew()
                    bounded.cancel_scope.cancel()
                self._expire()
        finally:
            self._running = False

    def _next_wait(self) -> float:
        earliest = min(held.valid_until for held in self._held.values())
        return max(0.0, min(self.settings.renew_seconds, earliest - self._now()))

    async def _abandon_at_deadline(self, scope: anyio.CancelScope) -> None:
        if not self._held:
            return  # all released since the renewal started: no lease can run out
        earliest = min(held.valid_until for held in self._held.values())
        await self._clock.sleep(max(0.0, earliest - self._now()))
        self._failed_renewal("it did not answer before a lease ran out")
        scope.cancel()

    async def _renew(self) -> None:
        snapshot = dict(self._held)  # not empty: `_run` renews only while something is held
        started = self._now()
        try:
            kept = await self.backend.renew([held.lease for held in snapshot.values()])
        except Exception as error:
            self._failed_renewal(str(error))
            return
        if self._failing:
            log.warning("session leases renewed again after %d failed attempts", self._failing)
            self._failing = 0
        self.renewals += 1
        assert self.backend.ttl is not None
        for session_id, held in snapshot.items():
            if self._held.get(session_id) is not held:
                continue  # released (or taken again) meanwhile
            if session_id in kept:
                held.valid_until = started + self.backend.ttl
            else:
                self._lose(session_id, "its lease was taken over or ended elsewhere")

    def _failed_renewal(self, why: str) -> None:
        self._failing += 1
        if self._failing == 1:
            log.warning("renewing %d session leases failed: %s", len(self._held), why)

    def _expire(self) -> None:
        now = self._now()
        for session_id, held in list(self._held.items()):
            if held.valid_until <= now:
                self._lose(session_id, "its lease could not be renewed in time")

    def _lose(self, session_id: str, why: str) -> None:
        held = self._held.pop(session_id)
        self.backend.forget(held.lease)  # from now on its writes are refused, unsent
        log.error("session %s: this host lost it (%s); closing it now", session_id, why)
        self._group.start_soon(self._on_lost, session_id, name=f"lost lease {session_id}")
