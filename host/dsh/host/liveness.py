"""`Liveness`: making Sessions live and cold, under their leases and their locks.

The one place an agent is made or closed. Its rules:

1. **One at a time per Session.** A per-Session lock (`KeyedLock`) is held
   while a Session is made live (`go_live`), while it goes cold (`close`,
   until its wake entry is written) and while this Host writes its stored log
   without making it live (a title, a delete, moving an empty one to the
   trash): nothing else makes it live or writes its log meanwhile, so this
   Host stays the one writer of every log. `cold_slot(id)` takes the lock of
   a cold Session, or answers that it is live without waiting.
2. **The lease first.** A Session goes live only under its lease
   (`acquire`, `SessionLiveElsewhere` when another host holds it); a resume
   takes it before reading the stored log, so what it reads includes every
   earlier owner's writes. A lease that is lost closes the Session at once.
3. **Acknowledged before published.** A Session is published to the plugins
   (`dsh_agent_published`) only after a flush of it was acknowledged and the
   wake index recorded that it is live; a new Session that fails is taken
   out of the list again (to the trash, else hidden as a phantom), so a
   create answered with an error leaves nothing behind.
4. **Closing** closes the agent (its final flush), then the wake index
   records the stored log's wake time, then the lease is released; with
   `clean_empty_sessions`, a Session never used goes to the trash.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
from anyio.abc import TaskGroup

from ..agents.agent import Agent
from ..base.background import Background
from ..base.clock import Clock
from ..base.locks import KeyedLock
from ..base.scope import dispose
from ..models.base import ModelAdapter
from ..persistence.backend import Backend, LogMark
from ..persistence.coordinator import PersistenceCoordinator
from ..persistence.errors import LeaseHeld, SessionNotFound
from ..persistence.leases import Lease, LeaseBackend
from ..plugins.contributions import Contributions
from ..session.errors import SessionLiveElsewhere
from ..session.live import LiveSessions
from ..session.log import Session
from ..session.summary import is_empty
from ..wake.lifecycle import SessionLifecycle
from .catalogue.catalogue import Catalogue
from .errors import HostClosed, PersistenceUnavailable
from .heap import HeapPolicy
from .leases import LeaseKeeper, LeaseSettings

__all__ = ["Liveness"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Running:
    group: TaskGroup
    coordinator: PersistenceCoordinator
    keeper: LeaseKeeper


class Liveness:
    """Going live and cold for one Host (see the module docstring). `live`, `backend` and
    `clock` are the Host's; `model()` its model adapter (known once the Host started)."""

    def __init__(
        self,
        *,
        live: LiveSessions,
        backend: Backend,
        model: Callable[[], ModelAdapter],
        clock: Clock,
        leases: LeaseBackend,
        lease_settings: LeaseSettings,
        lifecycle: SessionLifecycle,
        contributions: Contributions,
        catalogue: Catalogue,
        max_steps: int,
        clean_empty_sessions: bool = False,
        heap: HeapPolicy | None = None,
        background: Background | None = None,
    ) -> None:
        self.live = live
        self.backend = backend
        self._model = model
        self.clock = clock
        self._leases = leases
        self._lease_settings = lease_settings
        self._lifecycle = lifecycle
        self._contributions = contributions
        self._catalogue = catalogue
        self._max_steps = max_steps
        self._clean_empty_sessions = clean_empty_sessions
        self._heap = heap
        self._background = background
        self._agents: dict[str, Agent] = {}
        self._closing: dict[str, anyio.Event] = {}
        self.lock = KeyedLock()
        self._running: _Running | None = None
        self._accepting = False

    # -- with the Host ----------------------------------------------------------------

    def start(self, group: TaskGroup, coordinator: PersistenceCoordinator) -> LeaseKeeper:
        """Begin, in the Host's task group; returns the keeper of this Host's leases."""
        keeper = LeaseKeeper(
            self._leases, group, self._lease_lost, clock=self.clock, settings=self._lease_settings
        )
        self._running = _Running(group, coordinator, keeper)
        self._accepting = True
        return keeper

    def stop(self) -> None:
        """Take no new work from now on (the Host is closing): `require_running` raises
        `HostClosed`, while closes and lease releases under way still finish."""
        self._accepting = False

    def require_running(self) -> _Running:
        """What the Host started with; `HostClosed` before it started or once it stops."""
        if not self._accepting or self._running is None:
            raise HostClosed("the host is not running")
        return self._running

    async def close_all(self) -> list[str]:
        """Close every live Session side by side (each may keep retrying its last writes
        for a while), then wait for every other close under way (a hibernation's, say).
        Returns the ids of those whose events could not all be stored (each is logged)."""
        unstored: list[str] = []

        async def close(session_id: str) -> None:
            try:
                await self.close(session_id)
            except Exception as error:
                log.error("session %s was not fully stored: %s", session_id, error)
                unstored.append(session_id)

        async with anyio.create_task_group() as group:
            for session_id in list(self._agents):
                group.start_soon(close, session_id)
        for closing in list(self._closing.values()):
            await closing.wait()
        return unstored

    # -- agents -----------------------------------------------------------------------

    def agent(self, session_id: str) -> Agent | None:
        """The live agent of this Session, if it is live."""
        return self._agents.get(session_id)

    def agents(self) -> list[Agent]:
        return list(self._agents.values())

    # -- leases and the lock ----------------------------------------------------------

    def owns(self, session_id: str) -> bool:
        """True while this Host holds the Session's lease."""
        return self._running is not None and self._running.keeper.holds(session_id)

    async def acquire(self, session_id: str) -> Lease:
        """The Session's lease for this Host; `SessionLiveElsewhere` if another holds it."""
        if self._running is None:
            raise HostClosed("the host is not running")
        try:
            return await self._running.keeper.acquire(session_id)
        except LeaseHeld as held:
            raise SessionLiveElsewhere(str(held), held.owner) from None

    async def release(self, session_id: str) -> None:
        if self._running is not None:
            await self._running.keeper.release(session_id)

    @asynccontextmanager
    async def cold_writer(self, session_id: str) -> AsyncIterator[Lease]:
        """Hold the Session's lease while this Host writes its stored log without making
        it live (a title, a delete): `SessionLiveElsewhere` if another host owns it."""
        lease = await self.acquire(session_id)
        try:
            yield lease
        finally:
            await self.release(session_id)

    async def cold_slot(self, session_id: str) -> bool:
        """Wait until no other resume, rename, delete or close of the Session runs; then
        take its lock if it is cold (True: give it back with `release_slot`), or answer
        False, holding nothing, if it is live. A live Session answers at once."""
        while True:
            if session_id in self._agents:
                return False
            await self.lock.acquire(session_id)
            if session_id not in self._agents:
                return True
            self.lock.release(session_id)

    def release_slot(self, session_id: str) -> None:
        self.lock.release(session_id)

    # -- going live -------------------------------------------------------------------

    async def go_live(
        self,
        session: Session,
        lease: Lease,
        *,
        seed_end: int,
        parent: Agent | None = None,
        new: bool = False,
        stored: LogMark | None = None,
    ) -> Agent:
        """Make `session` live under `lease` once storage acknowledged it (rule 3); `new`
        for a Session that did not exist before (its storage is removed again if this
        fails: no phantoms); `stored` for a resume whose read it proves (`attach`). The
        lease is released if it fails."""
        running = self._running
        assert running is not None, "go_live runs only after acquire, which needs a started Host"
        coordinator = running.coordinator
        try:
            close = self.live.open(session)
        except BaseException:
            await self.release(lease.session_id)
            raise
        detach = coordinator.attach(session, seed_end=seed_end, stored=stored)
        try:
            durable = await self.live.flush(session)
            if not durable:
                raise PersistenceUnavailable(f"storage did not acknowledge session {session.id}")
            await self._lifecycle.going_live(session)
        except BaseException:
            with anyio.CancelScope(shield=True):
                if new:
                    await coordinator.abandon(session)
                    await self._discard(session.id)
                else:
                    try:
                        await dispose(detach)
                    except Exception:
                        log.warning("session %s was not stored", session.id, exc_info=True)
                close()
                await self.release(lease.session_id)
            raise
        agent = Agent(
            session=session,
            live=self.live,
            model=self._model(),
            group=running.group,
            clock=self.clock,
            parent=parent,
            max_steps=self._max_steps,
            background=self._background,
        )
        agent.scope.add(detach)
        self._agents[session.id] = agent
        if not self.owns(session.id):
            # Lost while going live (its renewal failed meanwhile): never publish it.
            await self.close(session.id)
            raise PersistenceUnavailable(f"session {session.id} lost its lease while going live")
        self._contributions.publish(agent)
        self._lifecycle.went_live(agent)
        if self._heap is not None:
            self._heap.settle()  # what this Session keeps lives as long as it does
        return agent

    async def _discard(self, session_id: str) -> None:
        """Take what a failed creation may have stored out of the list (to the trash)."""
        try:
            await self.backend.trash(session_id)
        except SessionNotFound:
            return  # nothing was stored
        except Exception as error:
            # Hidden from this Host's list; another process may still see it.
            self._catalogue.hide(session_id)
            log.warning("session %s: its failed creation stays stored: %s", session_id, error)
            return
        log.info("session %s: its failed creation was moved to the trash", session_id)

    # -- going cold -------------------------------------------------------------------

    async def close(self, session_id: str, *, clean: bool = True) -> None:
        """Close the agent and make the Session cold (rule 4).

        Closing the agent closes its scope, which detaches persistence: the
        detach makes the final flush and raises (after everything stopped) if
        some events could not be stored. With `clean_empty_sessions` (and
        `clean`), a Session that is empty then (`dsh.session.summary.is_empty`:
        made and never used) is moved to the trash, so that no one's list
        fills up with them; `dsh sessions restore ID` brings one back.
        """
        agent = self._agents.pop(session_id, None)
        if agent is None:
            return
        # The close holds the Session's lock until its wake entry is written: a
        # resume, rename or delete waits for it, then reads the whole stored log.
        # A go-live that failed closes under the lock its resume already holds.
        locked = self.lock.acquire_nowait(session_id)
        closing = self._closing[session_id] = anyio.Event()
        stored = False
        try:
            await agent.aclose()
            stored = True
        finally:
            self.live.close(agent.session)
            try:
                with anyio.CancelScope(shield=True):
                    try:
                        await self._lifecycle.went_cold(agent.session, stored=stored)
                    finally:
                        # Its wake entry is written under the lease: then another host may own it.
                        await self.release(session_id)
            finally:
                if locked:
                    self.lock.release(session_id)
                del self._closing[session_id]
                closing.set()
            if self._heap is not None:
                self._heap.released()
        if clean and self._clean_empty_sessions and is_empty(agent.session):
            await self._trash_empty(session_id)

    async def _trash_empty(self, session_id: str) -> None:
        if not await self.cold_slot(session_id):
            return  # live again already: no longer left empty
        try:
            async with self.cold_writer(session_id):
                await self.backend.trash(session_id)
        except SessionNotFound:
            return
        except Exception as error:
            log.warning("session %s is empty but stays listed: %s", session_id, error)
            return
        finally:
            self.release_slot(session_id)
        log.info("session %s was never used: moved to the trash", session_id)

    async def writes_refused(self, session_id: str) -> None:
        """Storage refused one of the Session's events (the coordinator's rule 8): close
        it at once, so that it continues from its stored log when next used instead of
        holding events no write can store (`clean=False`: it is not an unused one)."""
        await self._close_at_once(session_id, "storage refused an event", clean=False)

    async def _lease_lost(self, session_id: str) -> None:
        """The Session's lease is gone (another host may own it now): close it at once."""
        await self._close_at_once(session_id, "losing its lease")

    async def _close_at_once(self, session_id: str, why: str, *, clean: bool = True) -> None:
        """Close a Session whose writes can no longer be stored. What was not stored was
        never acknowledged (its flushes raised), so a failing close is only logged."""
        try:
            await self.close(session_id, clean=clean)
        except Exception as error:
            log.error("session %s was closed after %s: %s", session_id, why, error)
