"""`Sessions`: what a Host does to a Session named by its id.

Create one, spawn a delegated child, resume a cold one, fork one, post a
person's message to it, rename it, delete it, restore it from the trash, stop
its turn. `watch_list` tells a watcher (the pages' `WS /api/live`) that the
list changed: a Session was created, spawned, forked, deleted or restored here. Each is built
from the rules of `dsh.host.liveness` (the lease first, the Session's lock,
acknowledged before published) and reads storage through the catalogue.

- A resume of a live Session is a no-op; concurrent resumes of one cold
  Session make it live once (the others wait for the first).
- A message for a Session live on another host of a shared store goes
  through its inbox (`dsh.relay.messages`) when the store has one.
- A title or a delete of a cold Session writes its stored log directly,
  holding its lock and lease, without making it live (that would publish
  its agent, and a plugin could start due work).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import JsonValue

from ..agents.agent import Agent
from ..base.listeners import Listeners
from ..base.scope import Disposer
from ..persistence.errors import SessionExists, SessionNotFound, StorageError
from ..session.errors import SessionLiveElsewhere
from ..session.event import SessionEvent
from ..session.events import SessionTitle
from ..session.header import SessionHeader
from ..session.ids import validate_session_id
from ..session.log import Session
from ..session.summary import SessionSummary
from ..session.types import SESSION_TITLE
from .attention import Attention
from .catalogue.catalogue import Catalogue
from .errors import PersistenceUnavailable
from .liveness import Liveness
from .search import Search

if TYPE_CHECKING:
    from ..relay.messages import InboxRelay

__all__ = ["PostedMessage", "Sessions"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PostedMessage:
    """Where `Sessions.post_message` queued a message: on `agent` here (`resumed` if it
    was made live for it), or through the inbox for the host `owner`."""

    agent: Agent | None
    resumed: bool
    owner: str | None


class Sessions:
    """The Session operations of one Host (see the module docstring).

    `inbox` is set by the Host when its store is shared by several hosts.
    """

    def __init__(
        self,
        liveness: Liveness,
        catalogue: Catalogue,
        attention: Attention,
        search: Search,
        *,
        cwd: str,
    ) -> None:
        self._liveness = liveness
        self._catalogue = catalogue
        self._attention = attention
        self._search = search
        self._live = liveness.live
        self._backend = liveness.backend
        self._clock = liveness.clock
        self._cwd = cwd
        self.inbox: InboxRelay | None = None
        # The end-seed marker of a resume that failed: a retry reuses it, since it
        # may be stored although the attempt failed.
        self._failed_markers: dict[str, SessionEvent] = {}
        self._list_watchers: Listeners[Callable[[], None]] = Listeners()

    def watch_list(self, watcher: Callable[[], None]) -> Disposer:
        """Call `watcher()` after a Session is created, spawned, forked, deleted or
        restored by this host (not by another process on the same store); returns
        the disposer. A watcher that raises is logged and skipped."""
        return self._list_watchers.add(watcher)

    def _list_changed(self) -> None:
        for watcher in self._list_watchers:
            try:
                watcher()
            except Exception:
                log.exception("list watcher %r failed", watcher)

    def _new_id(self) -> str:
        return uuid.uuid4().hex[:16]

    async def create(self, *, origin: Literal["web", "cli", "fork", "api"] = "web") -> Agent:
        """A new live Session and its root agent, stored before this returns."""
        self._liveness.require_running()
        session = Session.new(
            self._new_id(), cwd=self._cwd, created_at=self._clock.wall_ms(), origin=origin
        )
        lease = await self._liveness.acquire(session.id)
        agent = await self._liveness.go_live(session, lease, seed_end=0, new=True)
        self._list_changed()
        return agent

    async def spawn_child(self, parent: Agent) -> Agent:
        """A child agent (delegation) on a new Session one level deeper than `parent`'s."""
        self._liveness.require_running()
        session = Session.new(
            self._new_id(),
            cwd=parent.session.header.cwd,
            created_at=self._clock.wall_ms(),
            origin="api",
            delegation_depth=parent.session.header.depth + 1,
        )
        lease = await self._liveness.acquire(session.id)
        agent = await self._liveness.go_live(session, lease, seed_end=0, parent=parent, new=True)
        self._list_changed()
        return agent

    async def resume(self, session_id: str) -> tuple[Agent, bool]:
        """Make a stored Session live. Returns `(agent, resumed)`.

        Resuming a live Session is a no-op: `(its agent, False)`. Concurrent
        resumes of one cold Session make it live once: the others wait for
        the first and get `(its agent, False)` (or try again if it failed).
        """
        liveness = self._liveness
        liveness.require_running()
        validate_session_id(session_id)
        if not await liveness.cold_slot(session_id):
            agent = liveness.agent(session_id)
            assert agent is not None
            return agent, False
        try:
            # The lease first: what is read after it includes every earlier owner's writes.
            lease = await liveness.acquire(session_id)
            try:
                stored = await self._catalogue.read(session_id)
            except BaseException:
                await liveness.release(session_id)
                raise
            session = Session.resume(
                stored.header,
                stored.events,
                resumed_at=self._clock.wall_ms(),
                marker=self._failed_markers.pop(session_id, None),
            )
            # Where the log stood for that very read (None: this backend cannot tell, and
            # persistence proves the prefix itself): proven by construction.
            mark = stored.mark
            if mark is not None:
                self._catalogue.reader.proof.seed(session, mark.length, mark.incarnation)
            try:
                seed_end = len(stored.events)
                agent = await liveness.go_live(session, lease, seed_end=seed_end, stored=mark)
            except BaseException:
                self._failed_markers[session_id] = session.events[-1]
                raise
            return agent, True
        finally:
            liveness.release_slot(session_id)

    async def post_message(
        self, session_id: str, text: str, *, time_zone: str | None = None
    ) -> PostedMessage:
        """Queue a person's message on the Session, wherever it is live.

        A cold Session is made live here first (a resume). One live on another
        host of a shared store gets the message through its inbox
        (`dsh.relay.messages`): stored now, queued by the owner as a local message.
        Raises what `resume` raises; `SessionLiveElsewhere` only for a store
        without an inbox.
        """
        try:
            agent, resumed = await self.resume(session_id)
        except SessionLiveElsewhere as elsewhere:
            if self.inbox is None:
                raise
            await self.inbox.post(session_id, text, time_zone)
            return PostedMessage(None, False, elsewhere.owner)
        agent.submit(text, {"kind": "user"}, time_zone=time_zone)
        return PostedMessage(agent, resumed, None)

    async def fork(self, session_id: str, at_seq: int | None = None) -> Agent:
        """A new live child Session copying events `[0, at_seq)` of a live or cold Session.

        A live parent is flushed first and only its stored events can be
        copied: a child must never hold parent events that the parent's own
        log might lose in a crash. A parent that goes cold meanwhile (a
        delete or a hibernation closed it) is read from storage instead,
        once its close is done: a fork racing a delete either copies the
        parent before it went to the trash or raises `SessionNotFound`, and
        leaves nothing behind. Raises `PersistenceUnavailable` when the
        flush of a parent that stays live is not acknowledged, `ValueError`
        for an out-of-range `at_seq`.
        """
        self._liveness.require_running()
        validate_session_id(session_id)
        header, events = await self._fork_source(session_id)
        at = len(events) if at_seq is None else at_seq
        if not 0 <= at <= len(events):
            raise ValueError(
                f"atSeq {at} is out of range for session {session_id} (0..{len(events)})"
            )
        child = Session.fork(
            header, events, self._new_id(), at=at, created_at=self._clock.wall_ms()
        )
        assert child.header.seed_length is not None
        lease = await self._liveness.acquire(child.id)
        agent = await self._liveness.go_live(
            child, lease, seed_end=child.header.seed_length, new=True
        )
        self._list_changed()
        return agent

    async def _fork_source(self, session_id: str) -> tuple[SessionHeader, list[SessionEvent]]:
        """The parent's header and the events a fork may copy (`fork`'s docstring)."""
        while not await self._liveness.cold_slot(session_id):
            agent = self._liveness.agent(session_id)
            assert agent is not None
            live = agent.session
            events = list(live.events)
            if await self._live.flush(live):
                return live.header, events
            if self._liveness.agent(session_id) is agent:
                raise PersistenceUnavailable(
                    f"storage did not acknowledge session {session_id}; it cannot be forked"
                )
            # It is going cold (its persistence detached first): read it once it is.
        try:
            stored = await self._catalogue.read(session_id)
        finally:
            self._liveness.release_slot(session_id)
        return stored.header, list(stored.events)

    async def set_title(self, session_id: str, title: str) -> SessionSummary:
        """Give the Session a title: a durable `session/title` event; its new summary.

        A live Session gets the event appended and this returns once a flush
        acknowledged it (`PersistenceUnavailable` otherwise). A cold one is
        not made live for this (module docstring): holding the Session's lock,
        so nothing makes it live meanwhile, this Host appends the event to the
        stored log itself, as the Session's one writer. Raises `ValueError`
        for a title `dsh.SessionTitle` refuses, `SessionNotFound`, `StorageError`.
        """
        self._liveness.require_running()
        validate_session_id(session_id)
        data = SessionTitle(title=title).data()
        if not await self._liveness.cold_slot(session_id):
            agent = self._liveness.agent(session_id)
            assert agent is not None
            session = agent.session
            self._live.append(session, SESSION_TITLE, data)
            if not await self._live.flush(session):
                raise PersistenceUnavailable(
                    f"storage did not acknowledge the title of session {session_id}"
                )
            return self._catalogue.summary(session)
        try:
            return await self._title_stored(session_id, data)
        finally:
            self._liveness.release_slot(session_id)

    async def _title_stored(self, session_id: str, data: dict[str, JsonValue]) -> SessionSummary:
        header, length = await self._catalogue.header(session_id)
        event = SessionEvent(seq=length, type=SESSION_TITLE, time=self._clock.wall_ms(), data=data)
        try:
            async with self._liveness.cold_writer(session_id):
                await self._backend.append(session_id, [event])
        finally:
            await self._backend.release(session_id)
        return SessionSummary(
            session_id,
            header.created_at,
            False,
            length + 1,
            header.lineage,
            title=SessionTitle.model_validate(data).title,
            updated_at=event.time,
        )

    async def delete(self, session_id: str) -> None:
        """Take a Session out of the list: close it if it is live, then move its log
        to the trash (`Backend.trash`; `dsh sessions restore ID` brings it back).

        Raises `SessionNotFound`, `SessionExists` if the trash already holds a
        Session with that id, `StorageError`, and what closing raises when
        some of a live Session's events could not be stored (it is then cold,
        and not deleted).
        """
        self._liveness.require_running()
        validate_session_id(session_id)
        while not await self._liveness.cold_slot(session_id):
            await self._liveness.close(session_id, clean=False)
        try:
            if self._catalogue.hidden(session_id):
                raise SessionNotFound(f"no session {session_id!r}")
            try:
                async with self._liveness.cold_writer(session_id):
                    await self._backend.trash(session_id)
            except SessionNotFound:
                raise SessionNotFound(f"no session {session_id!r}") from None
        finally:
            self._liveness.release_slot(session_id)
        self._list_changed()
        self._search.forget(session_id)
        try:
            await self._attention.forget(session_id)
        except StorageError as error:  # it is deleted; its unread count merely lingers
            log.warning("session %s is deleted, but not its alerts: %s", session_id, error)

    async def restore(self, session_id: str) -> SessionSummary:
        """Bring a deleted Session back from the trash, unchanged and cold (what
        `dsh sessions restore ID` does, `Backend.restore`); returns its list row.

        Raises `SessionNotFound` if the trash does not hold it, `SessionExists`
        if a stored Session already has that id, `StorageError`. A restored
        Session's reminders are not in the wake index until it is opened once
        (or the index is rebuilt), as after a CLI restore.
        """
        self._liveness.require_running()
        validate_session_id(session_id)
        try:
            await self._backend.restore(session_id)
        except SessionNotFound:
            raise SessionNotFound(f"the trash holds no session {session_id!r}") from None
        except SessionExists:
            raise SessionExists(f"a session {session_id!r} is already stored") from None
        self._list_changed()
        self._search.again(session_id)
        return await self._catalogue.stored_summary(session_id, live=False)

    async def cancel_turn(self, session_id: str) -> bool:
        """Stop the Session's running turn (`Agent.cancel_turn`); True if one ran.

        A cold Session runs no turn: False, and it stays cold. Raises
        `SessionNotFound` for an unknown id.
        """
        validate_session_id(session_id)
        agent = self._liveness.agent(session_id)
        if agent is None:
            await self._catalogue.tail(session_id)  # SessionNotFound unless it is stored
            return False
        return await agent.cancel_turn()
