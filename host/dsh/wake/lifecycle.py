"""`SessionLifecycle`: what the Host does when a Session goes live or cold.

The Host calls it at four points, and nowhere else:

- `going_live(session)` — in `Liveness.go_live`, once storage acknowledged the
  Session and before its agent is published: the wake index makes sure a
  crash while it is live cannot lose a reminder created meanwhile
  (`dsh.wake.index`, rule 1). A failure here fails the go-live.
- `went_live(agent)` — right after publication: observers hear `live=True`,
  hibernation starts watching the Session.
- `went_cold(session, stored=...)` — in `Liveness.close`, after the
  agent closed (`stored` says whether its last events were all stored) and
  before the close returns: the wake index records what the plugins answer
  for the stored log, hibernation forgets the Session, observers hear
  `live=False`.
- `start` / `stop` / `aclose` with the Host.

Observers (`observe`) are how the web layer learns that a Session went cold
or came back (`{"kind": "live"}` frames); `hold` is how a watcher keeps a
Session from hibernating. Both work whether or not wake and hibernation are
on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from anyio.abc import TaskGroup

from ..base.clock import Clock
from ..base.listeners import Listeners
from ..base.scope import Disposer
from ..session.live import LiveSessions, Observation
from ..session.log import Session, SessionLog
from .backend import WakeBackend
from .errors import WakeIndexUnavailable
from .hibernation import Hibernator
from .index import DEFAULT_WORKERS, WakeIndex

if TYPE_CHECKING:
    from ..agents.agent import Agent

__all__ = ["LifecycleHost", "LifecycleObserver", "SessionLifecycle"]

log = logging.getLogger(__name__)

LifecycleObserver = Callable[[Session, bool], None]
"""Called with `(session, live)` when a Session object went live or cold."""


class LifecycleHost(Protocol):
    """What the lifecycle needs of its Host (a `dsh.host.host.Host` is one)."""

    clock: Clock
    live: LiveSessions

    def agent(self, session_id: str) -> Agent | None:
        """The live agent of the Session, if it is live here."""

    async def close_session(self, session_id: str) -> None:
        """Make the Session cold (hibernation)."""

    async def resume(self, session_id: str) -> tuple[Agent, bool]:
        """Make a stored Session live; `SessionNotFound` if it is not stored."""

    def durable_length(self, session: Session) -> int:
        """How many events of live `session` storage confirmed."""

    def wake_at(self, log: SessionLog) -> int | None:
        """The plugins' wake time of `log` (`dsh_session_wake_at`)."""

    async def session_wake_at(self, session_id: str) -> int | None:
        """The plugins' wake time of a Session's durable events; `SessionNotFound`."""

    async def stored_ids(self) -> list[str]:
        """The id of every stored Session."""


class SessionLifecycle:
    """The Host's Session lifecycle: wake index, hibernation, observers."""

    def __init__(
        self,
        host: LifecycleHost,
        *,
        wake_backend: WakeBackend | None = None,
        idle_seconds: float | None = None,
        wake_workers: int | None = None,
    ) -> None:
        self._host = host
        self._observers: Listeners[LifecycleObserver] = Listeners()
        self.index: WakeIndex | None = None
        if wake_backend is not None:
            self.index = WakeIndex(
                wake_backend,
                _Port(host),
                clock=host.clock,
                workers=DEFAULT_WORKERS if wake_workers is None else wake_workers,
            )
        self.hibernator: Hibernator | None = None
        if idle_seconds:
            self.hibernator = Hibernator(
                idle_seconds=idle_seconds,
                clock=host.clock,
                agent=host.agent,
                may_hibernate=self._may_hibernate,
                close=host.close_session,
            )
        self._unobserve: Disposer | None = None

    @property
    def wakes(self) -> bool:
        """True when cold Sessions are woken (`[host] wake_cold_sessions`)."""
        return self.index is not None

    # -- with the Host --------------------------------------------------------------

    async def start(self, group: TaskGroup) -> None:
        if self.index is not None:
            await self.index.start(group)
        if self.hibernator is not None:
            self._unobserve = self._host.live.observe(self._activity)
            self.hibernator.start(group)

    def stop(self) -> None:
        """The Host is closing: wake and hibernate nothing more."""
        if self.index is not None:
            self.index.stop_waking()
        if self.hibernator is not None:
            self.hibernator.stop()
        if self._unobserve is not None:
            self._unobserve()
            self._unobserve = None

    async def aclose(self) -> None:
        """After every Session was closed: store the index's last state."""
        self.stop()
        if self.index is not None:
            await self.index.aclose()

    # -- the transitions ----------------------------------------------------------------

    async def going_live(self, session: Session) -> None:
        if self.index is not None:
            try:
                await self.index.going_live(session.id)
            except BaseException:
                self.index.did_not_go_live(session.id)
                raise

    def went_live(self, agent: Agent) -> None:
        if self.hibernator is not None:
            self.hibernator.went_live(agent.session.id)
        self._notify(agent.session, True)

    async def went_cold(self, session: Session, *, stored: bool) -> None:
        if self.hibernator is not None:
            self.hibernator.went_cold(session.id)
        try:
            if self.index is not None:
                await self._index_cold(self.index, session, stored)
        finally:
            self._notify(session, False)

    async def _index_cold(self, index: WakeIndex, session: Session, stored: bool) -> None:
        known, wake_at = stored, None

        if stored:
            # Every event is stored: the in-memory log is the stored one.
            wake_at = self._host.wake_at(session)
        else:
            try:
                wake_at, known = await self._host.session_wake_at(session.id), True
            except Exception as error:
                log.warning("session %s: its wake time stays to be derived: %s", session.id, error)
        try:
            await index.gone_cold(session.id, wake_at, known=known)
        except WakeIndexUnavailable as error:
            log.error("session %s went cold but %s", session.id, error)

    # -- observers and holds --------------------------------------------------------------

    def observe(self, observer: LifecycleObserver) -> Disposer:
        """Hear `(session, live)` for every Session object that went live or cold."""
        return self._observers.add(observer)

    def hold(self, session_id: str) -> Disposer:
        """Keep `session_id` from hibernating (while a watcher is connected)."""
        if self.hibernator is None:
            return lambda: None
        return self.hibernator.hold(session_id)

    def _notify(self, session: Session, live: bool) -> None:
        for observer in self._observers:
            try:
                observer(session, live)
            except Exception:
                log.exception("lifecycle observer %r failed", observer)

    def _activity(self, observation: Observation) -> None:
        if self.hibernator is not None:
            self.hibernator.touch(observation.session.id)

    def _may_hibernate(self, agent: Agent) -> bool:
        host = self._host
        session = agent.session
        if agent.parent is not None:
            return False  # a delegated child its parent is still using
        durable = host.durable_length(session)
        if durable < len(session):
            return False  # its writes are still being retried
        wake_at = host.wake_at(session.prefix(durable))
        if self.index is None:
            return wake_at is None  # without wake, reminders fire only while live
        # Due, or about to be (it would be woken again at once; a storm's Session woken
        # ahead stays live until its lead): left to its owner.
        return wake_at is None or wake_at > host.clock.wall_ms() + self.index.lead_for(wake_at)


class _Port:
    """The Host as the wake index sees it (`dsh.wake.index.WakeHost`)."""

    def __init__(self, host: LifecycleHost) -> None:
        self._host = host

    def is_live(self, session_id: str) -> bool:
        return self._host.live.find(session_id) is not None

    async def resume(self, session_id: str) -> None:
        await self._host.resume(session_id)

    async def derive(self, session_id: str) -> int | None:
        return await self._host.session_wake_at(session_id)

    async def stored_ids(self) -> list[str]:
        return await self._host.stored_ids()
