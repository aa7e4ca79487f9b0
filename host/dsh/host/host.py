"""The Host: the composition root of one dsh process (or one test).

A Host owns the process-wide task group, the `LiveSessions`, the persistence
coordinator, the pluggy `PluginManager` with its loader, and every live
Session's agent. It is an async context manager:

    async with Host(backend=JsonlBackend(data_dir), model=DemoModel()) as host:
        agent = await host.create_session()

Every agent that becomes live (new Session, resume, fork, child spawn) is
*published* through `dsh_agent_published`, once, after its Session's storage
acknowledged a flush. Reading a cold Session's stored log never publishes.
Closing the Host closes every agent (flushing its Session, retrying for at
most `close_retry_seconds`), unloads the plugins newest first, stops the
coordinator and closes the model adapter (the Host owns it: an adapter with
an `aclose()` method is closed last). Sessions that could not be stored are
listed in `unstored` afterwards. A Host that fails to start (a plugin that
does not load) unwinds exactly the same way, so work an earlier plugin
started is cancelled and awaited.

Reading storage goes through the Host, never around it (the web layer uses
these): `tail`, `stored_header`, `stored_log` / `with_stored_log`,
`history_page`, `list_sessions`, `storage_health` (a `StorageReader` does the
work). A Session is listed only once its creation was acknowledged: a create
or fork that fails leaves nothing listed behind (its storage is moved to the
trash before the error is raised).

Managing Sessions (the second-edition API): `set_title` appends a durable
`session/title` (to a cold Session's stored log directly, without making it
live), `delete_session` closes a live Session and moves its log to the
trash, `cancel_turn` stops a running turn. A per-Session slot keeps resumes,
renames and deletes of one Session from overlapping, so this Host stays the
one writer of every log. With `clean_empty_sessions` (what `dsh web` runs),
a Session that goes cold without ever being used is moved to the trash.

Every hook is called through `self.hooks` (`dsh.plugins.hooks.Hooks`, pluggy's order,
failures contained per plugin as each hookspec says). The methods that call
hooks on a Session's log take a `SessionLog`; `plugin_states` and
`session_wake_at` are where a live Session's durable prefix (in memory, on
the event loop) or a cold Session's stored log (read ranged, in a worker
thread) is chosen for them.
"""

from __future__ import annotations

import inspect
import logging
import os
import socket
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Concatenate, Literal, ParamSpec, Self, TypeVar

import anyio
import pluggy
from anyio.abc import TaskGroup
from pydantic import BaseModel, JsonValue

from ..agents.agent import DEFAULT_MAX_STEPS, Agent
from ..base.clock import Clock, SystemClock
from ..base.errors import CodedError
from ..base.jsontypes import to_json
from ..base.scope import Disposer, Scope
from ..models.base import ModelAdapter
from ..persistence.backend import Backend, LogMark, StoredSession
from ..persistence.coordinator import PersistenceCoordinator, Unconfirmed
from ..persistence.errors import LeaseHeld, SessionNotFound, StorageError
from ..persistence.leases import Lease, LeaseBackend
from ..plugins import hookspecs
from ..plugins.context import ClientModule, PluginContext
from ..plugins.errors import ActionError, HookNotImplemented
from ..plugins.hooks import ErrorHandler, Hooks
from ..plugins.hookspecs import RegisterCommand
from ..plugins.loader import PluginLoader, PluginSpec
from ..relay import ActionRelay, InboxRelay
from ..relay.errors import Unclaimed
from ..relay.follow import StoredFollowers
from ..session.errors import SessionLiveElsewhere
from ..session.event import SessionEvent
from ..session.events import SessionTitle
from ..session.facts import SummaryFacts
from ..session.header import SessionHeader
from ..session.ids import validate_session_id
from ..session.live import LiveSessions
from ..session.log import Session, SessionLog
from ..session.summary import SessionSummary, is_empty
from ..session.types import SESSION_TITLE, USER_MESSAGE
from ..wake import SessionLifecycle, WakeBackend
from .catalogue import HistoryPage, PageRequest, StorageReader, StoredLog
from .errors import HostClosed, PersistenceUnavailable
from .heap import HeapPolicy
from .leases import LeaseKeeper, LeaseSettings

__all__ = [
    "Host",
    "PublishedModule",
    "SessionSummary",
    "StorageHealth",
]

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")

#: An action on a Session live elsewhere: relayed, and when its owner let the
#: Session go meanwhile, tried here again — this many times in all.
_ACTION_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class PostedMessage:
    """Where `Host.post_message` queued a message: on `agent` here (`resumed` if it was
    made live for it), or through the inbox for the host `owner`."""

    agent: Agent | None
    resumed: bool
    owner: str | None


@dataclass(frozen=True, slots=True)
class StorageHealth:
    """Whether storage keeps up: `degraded` lists the Sessions whose writes are failing."""

    degraded: tuple[Unconfirmed, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.degraded

    @property
    def unconfirmed_events(self) -> int:
        return sum(item.count for item in self.degraded)


@dataclass(frozen=True, slots=True)
class PublishedModule:
    """A browser module contributed by a loaded plugin."""

    plugin: str
    module: ClientModule


class Host:
    """The composition root: live Sessions + persistence + plugins + agents."""

    def __init__(
        self,
        *,
        backend: Backend,
        model: ModelAdapter,
        plugins: Sequence[PluginSpec] = (),
        clock: Clock | None = None,
        cwd: str | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        close_retry_seconds: float = 0.0,
        clean_empty_sessions: bool = False,
        leases: LeaseBackend | None = None,
        lease_settings: LeaseSettings | None = None,
        wake_backend: WakeBackend | None = None,
        idle_seconds: float | None = None,
        heap: HeapPolicy | None = None,
    ) -> None:
        self.clock: Clock = clock or SystemClock()
        self.heap = heap
        # Names this Host in leases and in messages ("session … is live on host …").
        self.host_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.lease_settings = lease_settings or LeaseSettings()
        self.leases = leases or backend.lease_backend(
            self.host_id, ttl=self.lease_settings.ttl_seconds
        )
        self._keeper: LeaseKeeper | None = None
        self.live = LiveSessions(self.clock)
        self.backend = backend
        self.model = model
        self.cwd = cwd or os.getcwd()
        self.max_steps = max_steps
        self.close_retry_seconds = close_retry_seconds
        self.clean_empty_sessions = clean_empty_sessions
        self.unstored: list[str] = []
        self._reader = StorageReader(
            self.live,
            backend,
            durable=lambda session: (
                0 if self._coordinator is None else self._coordinator.durable_length(session)
            ),
            view=self.event_view,
        )
        self._phantoms: set[str] = set()
        self._failed_markers: dict[str, SessionEvent] = {}
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.hooks = Hooks(self.pm)
        self._modules: tuple[object, list[PublishedModule]] | None = None
        # The plugins' compact summaries of a live Session object, with what they were
        # computed for: (durable length, (loader generation, implementers)).
        self._compacts: weakref.WeakKeyDictionary[
            Session, tuple[tuple[int, object], dict[str, JsonValue]]
        ] = weakref.WeakKeyDictionary()
        self.scope = Scope("host")
        self._plugin_specs = tuple(plugins)
        self._agents: dict[str, Agent] = {}
        self._opening: dict[str, anyio.Event] = {}
        self._closing: dict[str, anyio.Event] = {}
        self.lifecycle = SessionLifecycle(
            self, wake_backend=wake_backend, idle_seconds=idle_seconds
        )
        self.relay: InboxRelay | None = None  # with a store shared by several hosts
        self.action_relay: ActionRelay | None = None  # likewise
        self.followers: StoredFollowers | None = None  # likewise
        self._stack: AsyncExitStack | None = None
        self._group: TaskGroup | None = None
        self._coordinator: PersistenceCoordinator | None = None
        self._loader: PluginLoader | None = None
        self._running = False

    # -- lifecycle --------------------------------------------------------

    async def __aenter__(self) -> Self:
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            if self.heap is not None:
                self.heap.install()
                stack.callback(self.heap.uninstall)
                heap = self.heap
                stack.callback(self.live.observe(lambda _: heap.touch()))
            group = await stack.enter_async_context(anyio.create_task_group())
            self._group = group
            self._coordinator = PersistenceCoordinator(
                self.live,
                self.backend,
                group,
                clock=self.clock,
                close_retry_seconds=self.close_retry_seconds,
            )
            self._keeper = LeaseKeeper(
                self.leases,
                group,
                self._lease_lost,
                clock=self.clock,
                settings=self.lease_settings,
            )
            self._loader = PluginLoader(self.pm, self._plugin_context)
            self._running = True
            await self._loader.load_all(self._plugin_specs)
            await self.lifecycle.start(group)
            inbox = self.backend.inbox()
            if inbox is not None:
                self.relay = InboxRelay(self, inbox)
                group.start_soon(self.relay.run, name="inbox relay")
            remote_actions = self.backend.remote_actions()
            if remote_actions is not None:
                self.action_relay = ActionRelay(self, remote_actions)
                group.start_soon(self.action_relay.run, name="action relay")
            feed = self.backend.event_feed()
            if feed is not None:
                self.followers = StoredFollowers(feed)
                group.start_soon(self.followers.run, name="stored events listener")
        except BaseException as error:
            try:
                await self._unwind(stack, "host failed to start")
            except Exception as unwind_error:
                error.add_note(f"while unwinding the host: {unwind_error!r}")
            raise
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every agent (flushing its Session), unload plugins, stop persistence."""
        if self._stack is None:
            return
        stack, self._stack = self._stack, None
        await self._unwind(stack, "host closing")

    async def _unwind(self, stack: AsyncExitStack, reason: str) -> None:
        """Stop everything (shielded), cancel the task group with `reason`, leave it."""
        self._running = False
        try:
            with anyio.CancelScope(shield=True):
                await self._teardown()
        finally:
            if self._group is not None:
                self._group.cancel_scope.cancel(reason)
            await stack.__aexit__(None, None, None)

    async def _teardown(self) -> None:
        if self.relay is not None:
            self.relay.stop()  # what is queued stays in the inbox for the next owner
        if self.action_relay is not None:
            self.action_relay.stop()  # an untaken request is withdrawn by its poster
        self.lifecycle.stop()
        # Concurrently: each Session may keep retrying its last writes for a while.
        async with anyio.create_task_group() as group:
            for session_id in list(self._agents):
                group.start_soon(self._close_at_exit, session_id)
        for closing in list(self._closing.values()):
            await closing.wait()  # a hibernation's close, say
        await self.lifecycle.aclose()
        if self._keeper is not None:
            self._keeper.close()
        if self._loader is not None:
            await self._loader.aclose()
        try:
            await self.scope.aclose()
        finally:
            try:
                if self._coordinator is not None:
                    await self._coordinator.aclose()
            finally:
                await self._close_model()

    async def _close_at_exit(self, session_id: str) -> None:
        try:
            await self.close_session(session_id)
        except Exception as error:
            log.error("session %s was not fully stored: %s", session_id, error)
            self.unstored.append(session_id)

    async def _close_model(self) -> None:
        # The Host owns its adapter: one with a connection pool (openai) closes it here.
        close = getattr(self.model, "aclose", None)
        if close is not None:
            await _dispose(close)

    def _plugin_context(self, name: str, config: BaseModel | None) -> PluginContext[Any]:
        assert self._group is not None
        return PluginContext(
            name=name,
            config=config,
            scope=self.scope.child(f"plugin {name}"),
            live=self.live,
            clock=self.clock,
            group=self._group,
        )

    @property
    def loader(self) -> PluginLoader:
        self._require_running()
        assert self._loader is not None
        return self._loader

    @property
    def coordinator(self) -> PersistenceCoordinator:
        self._require_running()
        assert self._coordinator is not None
        return self._coordinator

    def _require_running(self) -> None:
        if not self._running:
            raise HostClosed("the host is not running")

    # -- agents -----------------------------------------------------------

    def agent(self, session_id: str) -> Agent | None:
        """The live agent of this Session, if it is live."""
        return self._agents.get(session_id)

    def agents(self) -> list[Agent]:
        return list(self._agents.values())

    async def create_session(
        self, *, origin: Literal["web", "cli", "fork", "api"] = "web"
    ) -> Agent:
        """A new live Session and its root agent, stored before this returns."""
        self._require_running()
        session = Session.new(
            self._new_id(), cwd=self.cwd, created_at=self.clock.wall_ms(), origin=origin
        )
        lease = await self._acquire(session.id)
        return await self._go_live(session, lease, seed_end=0, new=True)

    async def spawn_child(self, parent: Agent) -> Agent:
        """A child agent (delegation) on a new Session one level deeper than `parent`'s."""
        self._require_running()
        session = Session.new(
            self._new_id(),
            cwd=parent.session.header.cwd,
            created_at=self.clock.wall_ms(),
            origin="api",
            delegation_depth=parent.session.header.depth + 1,
        )
        lease = await self._acquire(session.id)
        return await self._go_live(session, lease, seed_end=0, parent=parent, new=True)

    async def resume(self, session_id: str) -> tuple[Agent, bool]:
        """Make a stored Session live. Returns `(agent, resumed)`.

        Resuming a live Session is a no-op: `(its agent, False)`. Concurrent
        resumes of one cold Session make it live once: the others wait for
        the first and get `(its agent, False)` (or try again if it failed).
        """
        self._require_running()
        validate_session_id(session_id)
        opening = await self._cold_slot(session_id)
        if opening is None:
            return self._agents[session_id], False
        try:
            # The lease first: what is read after it includes every earlier owner's writes.
            lease = await self._acquire(session_id)
            try:
                stored = await self.read_stored(session_id)
            except BaseException:
                await self._release(session_id)
                raise
            session = Session.resume(
                stored.header,
                stored.events,
                resumed_at=self.clock.wall_ms(),
                marker=self._failed_markers.pop(session_id, None),
            )
            # Where the log stood for that very read (None: this backend cannot tell, and
            # persistence proves the prefix itself): proven by construction.
            mark = stored.mark
            if mark is not None:
                self._reader.proof.seed(session, mark.length, mark.incarnation)
            try:
                seed_end = len(stored.events)
                return await self._go_live(session, lease, seed_end=seed_end, stored=mark), True
            except BaseException:
                # Its marker may be stored although the attempt failed: a retry reuses it.
                self._failed_markers[session_id] = session.events[-1]
                raise
        finally:
            self._release_slot(session_id, opening)

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
            if self.relay is None:
                raise
            await self.relay.post(session_id, text, time_zone)
            return PostedMessage(None, False, elsewhere.owner)
        agent.submit(text, {"kind": "user"}, time_zone=time_zone)
        return PostedMessage(agent, resumed, None)

    async def live_elsewhere(self, session_id: str) -> str | None:
        """The host that holds the Session live, when that is another host."""
        if self.live.find(session_id) is not None:
            return None
        return (await self.leases.held_elsewhere([session_id])).get(session_id)

    async def stored_summary(self, session_id: str, *, live: bool) -> SessionSummary:
        """The list row of a Session from storage (one live on another host, say)."""
        validate_session_id(session_id)
        item = await self.backend.summary(session_id)
        if item is None:
            raise SessionNotFound(f"session {session_id} is not stored")
        return SessionSummary(
            item.id, item.created_at, live, item.length, item.lineage, item.title, item.preview
        )

    async def _cold_slot(self, session_id: str) -> anyio.Event | None:
        """Wait until no other resume, rename or delete of the Session runs; then take
        its slot if it is cold (release it with `_release_slot`), or return None if it
        is live. While a slot is held, nothing else makes that Session live or writes
        its stored log: this Host stays its one writer."""
        while True:
            if session_id in self._agents:
                return None
            opening = self._opening.get(session_id)
            if opening is None:
                break
            await opening.wait()
        opening = self._opening[session_id] = anyio.Event()
        return opening

    def _release_slot(self, session_id: str, opening: anyio.Event) -> None:
        del self._opening[session_id]
        opening.set()

    async def fork(self, session_id: str, at_seq: int | None = None) -> Agent:
        """A new live child Session copying events `[0, at_seq)` of a live or cold Session.

        A live parent is flushed first and only its stored events can be
        copied: a child must never hold parent events that the parent's own
        log might lose in a crash. Raises `PersistenceUnavailable` when that
        flush is not acknowledged, `ValueError` for an out-of-range `at_seq`.
        """
        self._require_running()
        validate_session_id(session_id)
        live = self.live.find(session_id)
        if live is not None:
            events = list(live.events)
            if not await self.live.flush(live):
                raise PersistenceUnavailable(
                    f"storage did not acknowledge session {session_id}; it cannot be forked"
                )
            header = live.header
        else:
            stored = await self.read_stored(session_id)
            header, events = stored.header, list(stored.events)
        at = len(events) if at_seq is None else at_seq
        if not 0 <= at <= len(events):
            raise ValueError(
                f"atSeq {at} is out of range for session {session_id} (0..{len(events)})"
            )
        child = Session.fork(header, events, self._new_id(), at=at, created_at=self.clock.wall_ms())
        assert child.header.seed_length is not None
        lease = await self._acquire(child.id)
        return await self._go_live(child, lease, seed_end=child.header.seed_length, new=True)

    async def close_session(self, session_id: str, *, clean: bool = True) -> None:
        """Close the agent and make the Session cold.

        Closing the agent closes its scope, which detaches persistence: the
        detach makes the final flush and raises (after everything stopped) if
        some events could not be stored. With `clean_empty_sessions` (and
        `clean`), a Session that is empty then (`dsh.session.summary.is_empty`: made
        and never used) is moved to the trash, so that no one's list fills up
        with them; `dsh sessions restore ID` brings one back.
        """
        agent = self._agents.pop(session_id, None)
        if agent is None:
            return
        # The close holds the Session's slot until its wake entry is written: a
        # resume, rename or delete waits for it, then reads the whole stored log.
        slot = None if session_id in self._opening else anyio.Event()
        if slot is not None:
            self._opening[session_id] = slot
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
                        await self.lifecycle.went_cold(agent.session, stored=stored)
                    finally:
                        # Its wake entry is written under the lease: then another host may own it.
                        await self._release(session_id)
            finally:
                if slot is not None:
                    self._release_slot(session_id, slot)
                del self._closing[session_id]
                closing.set()
            if self.heap is not None:
                self.heap.released()
        if clean and self.clean_empty_sessions and is_empty(agent.session):
            await self._trash_empty(session_id)

    async def _trash_empty(self, session_id: str) -> None:
        opening = await self._cold_slot(session_id)
        if opening is None:
            return  # live again already: no longer left empty
        try:
            async with self._cold_writer(session_id):
                await self.backend.trash(session_id)
        except SessionNotFound:
            return
        except Exception as error:
            log.warning("session %s is empty but stays listed: %s", session_id, error)
            return
        finally:
            self._release_slot(session_id, opening)
        log.info("session %s was never used: moved to the trash", session_id)

    async def set_title(self, session_id: str, title: str) -> SessionSummary:
        """Give the Session a title: a durable `session/title` event; its new summary.

        A live Session gets the event appended and this returns once
        a flush acknowledged it (`PersistenceUnavailable` otherwise). A cold
        one is not made live for this (that would publish its agent, and a
        plugin could start due work): holding the Session's slot, so nothing
        makes it live meanwhile, this Host appends the event to the stored log
        itself, as the Session's one writer. Raises `ValueError` for a title
        `dsh.SessionTitle` refuses, `SessionNotFound`, `StorageError`.
        """
        self._require_running()
        validate_session_id(session_id)
        data = SessionTitle(title=title).data()
        opening = await self._cold_slot(session_id)
        if opening is None:
            session = self._agents[session_id].session
            self.live.append(session, SESSION_TITLE, data)
            if not await self.live.flush(session):
                raise PersistenceUnavailable(
                    f"storage did not acknowledge the title of session {session_id}"
                )
            return self.summary(session)
        try:
            return await self._title_stored(session_id, data)
        finally:
            self._release_slot(session_id, opening)

    async def _title_stored(self, session_id: str, data: dict[str, JsonValue]) -> SessionSummary:
        header, length = await self.stored_header(session_id)
        event = SessionEvent(seq=length, type=SESSION_TITLE, time=self.clock.wall_ms(), data=data)
        try:
            async with self._cold_writer(session_id):
                await self.backend.append(session_id, [event])
        finally:
            await self.backend.release(session_id)
        return SessionSummary(
            session_id,
            header.created_at,
            False,
            length + 1,
            header.lineage,
            title=SessionTitle.model_validate(data).title,
        )

    async def delete_session(self, session_id: str) -> None:
        """Take a Session out of the list: close it if it is live, then move its log
        to the trash (`Backend.trash`; `dsh sessions restore ID` brings it back).

        Raises `SessionNotFound`, `SessionExists` if the trash already holds a
        Session with that id, `StorageError`, and what closing raises when
        some of a live Session's events could not be stored (it is then cold,
        and not deleted).
        """
        self._require_running()
        validate_session_id(session_id)
        while (opening := await self._cold_slot(session_id)) is None:
            await self.close_session(session_id, clean=False)
        try:
            if session_id in self._phantoms:
                raise SessionNotFound(f"no session {session_id!r}")
            try:
                async with self._cold_writer(session_id):
                    await self.backend.trash(session_id)
            except SessionNotFound:
                raise SessionNotFound(f"no session {session_id!r}") from None
        finally:
            self._release_slot(session_id, opening)

    async def cancel_turn(self, session_id: str) -> bool:
        """Stop the Session's running turn (`Agent.cancel_turn`); True if one ran.

        A cold Session runs no turn: False, and it stays cold. Raises
        `SessionNotFound` for an unknown id.
        """
        validate_session_id(session_id)
        agent = self._agents.get(session_id)
        if agent is None:
            await self.tail(session_id)  # SessionNotFound unless it is stored
            return False
        return await agent.cancel_turn()

    # -- leases -------------------------------------------------------------

    async def _acquire(self, session_id: str) -> Lease:
        """The Session's lease for this Host; `SessionLiveElsewhere` if another holds it."""
        assert self._keeper is not None
        try:
            return await self._keeper.acquire(session_id)
        except LeaseHeld as held:
            raise SessionLiveElsewhere(str(held), held.owner) from None

    @asynccontextmanager
    async def _cold_writer(self, session_id: str) -> AsyncIterator[Lease]:
        """Hold the Session's lease while this Host writes its stored log without making
        it live (a title, a delete): `SessionLiveElsewhere` if another host owns it."""
        lease = await self._acquire(session_id)
        try:
            yield lease
        finally:
            await self._release(session_id)

    async def _release(self, session_id: str) -> None:
        if self._keeper is not None:
            await self._keeper.release(session_id)

    def owns(self, session_id: str) -> bool:
        """True while this Host holds the Session's lease."""
        return self._keeper is not None and self._keeper.holds(session_id)

    async def _lease_lost(self, session_id: str) -> None:
        """The Session's lease is gone (another host may own it now): close it at once.

        Its writes are refused from now on, so whatever was not stored yet is
        not, and was never acknowledged.
        """
        try:
            await self.close_session(session_id)
        except Exception as error:
            log.error("session %s was closed after losing its lease: %s", session_id, error)

    async def _go_live(
        self,
        session: Session,
        lease: Lease,
        *,
        seed_end: int,
        parent: Agent | None = None,
        new: bool = False,
        stored: LogMark | None = None,
    ) -> Agent:
        """Make `session` live under `lease` once storage acknowledged it; `new` for a
        Session that did not exist before (its storage is removed again if that fails:
        no phantoms); `stored` for a resume whose read it proves (`attach`). The lease
        is released if it fails."""
        assert self._group is not None and self._coordinator is not None
        try:
            close = self.live.open(session)
        except BaseException:
            await self._release(lease.session_id)
            raise
        detach = self._coordinator.attach(session, seed_end=seed_end, stored=stored)
        try:
            durable = await self.live.flush(session)
            if not durable:
                raise PersistenceUnavailable(f"storage did not acknowledge session {session.id}")
            await self.lifecycle.going_live(session)
        except BaseException:
            with anyio.CancelScope(shield=True):
                if new:
                    await self._coordinator.abandon(session)
                    await self._discard(session.id)
                else:
                    try:
                        await _dispose(detach)
                    except Exception:
                        log.warning("session %s was not stored", session.id, exc_info=True)
                close()
                await self._release(lease.session_id)
            raise
        agent = Agent(
            session=session,
            live=self.live,
            model=self.model,
            group=self._group,
            clock=self.clock,
            parent=parent,
            max_steps=self.max_steps,
        )
        agent.scope.add(detach)
        self._agents[session.id] = agent
        if not self.owns(session.id):
            # Lost while going live (its renewal failed meanwhile): never publish it.
            await self.close_session(session.id)
            raise PersistenceUnavailable(f"session {session.id} lost its lease while going live")
        self._publish(agent)
        self.lifecycle.went_live(agent)
        if self.heap is not None:
            self.heap.settle()  # what this Session keeps lives as long as it does
        return agent

    async def _discard(self, session_id: str) -> None:
        """Take what a failed creation may have stored out of the list (to the trash)."""
        try:
            await self.backend.trash(session_id)
        except SessionNotFound:
            return  # nothing was stored
        except Exception as error:
            # Hidden from this Host's list; another process may still see it.
            self._phantoms.add(session_id)
            log.warning("session %s: its failed creation stays stored: %s", session_id, error)
            return
        log.info("session %s: its failed creation was moved to the trash", session_id)

    def _publish(self, agent: Agent) -> None:
        self.hooks.each(
            "dsh_agent_published", {"agent": agent}, about=f"for session {agent.session.id}"
        )

    def _new_id(self) -> str:
        return uuid.uuid4().hex[:16]

    # -- storage reads ----------------------------------------------------

    async def read_stored(self, session_id: str) -> StoredSession:
        """The whole stored log of a Session (what a resume or fork needs); never publishes."""
        stored = await read_stored(self.backend, session_id)
        if session_id in self._phantoms:
            raise SessionNotFound(f"no session {session_id!r}")
        return stored

    def durable_log(self, session: Session) -> SessionLog:
        """The prefix of live `session` that its storage confirmed, as a `SessionLog`."""
        return session.prefix(self.coordinator.durable_length(session))

    async def tail(self, session_id: str) -> int:
        """How many events the Session has: live, its length; cold, its stored count."""
        tail = await self._reader.tail(validate_session_id(session_id))
        if tail is None or session_id in self._phantoms:
            raise SessionNotFound(f"no session {session_id!r}")
        return tail

    async def stored_header(self, session_id: str) -> tuple[SessionHeader, int]:
        """A stored Session's header and event count, decoding no events."""
        described = await self._reader.stored_header(validate_session_id(session_id))
        if described is None or session_id in self._phantoms:
            raise SessionNotFound(f"no session {session_id!r}")
        return described

    async def stored_log(self, session_id: str) -> StoredLog:
        """A cold, read-only `SessionLog` of what storage holds for the Session.

        Its `event()` and `scan()` read storage (ranged, type-filtered), so
        call them from a worker thread: `with_stored_log` runs a function
        there. Never publishes an agent.
        """
        log_ = await self._reader.stored_log(validate_session_id(session_id))
        if log_ is None or session_id in self._phantoms:
            raise SessionNotFound(f"no session {session_id!r}")
        return log_

    async def with_stored_log(
        self,
        session_id: str,
        func: Callable[Concatenate[SessionLog, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """`func(log, *args, **kwargs)` in a worker thread, with the Session's `stored_log`."""
        stored = await self.stored_log(session_id)
        return await self._reader.in_worker(lambda: func(stored, *args, **kwargs))

    async def history_page(self, session_id: str, request: PageRequest) -> HistoryPage:
        """A page of history with the views storage vouches for (see `dsh.reader`)."""
        page = await self._reader.page(validate_session_id(session_id), request)
        if page is None or session_id in self._phantoms:
            raise SessionNotFound(f"no session {session_id!r}")
        return page

    async def proven_prefix(self, session: Session) -> int:
        """How many leading events of live `session` are stored, proven and confirmed."""
        return await self._reader.proven_prefix(session)

    def storage_health(self) -> StorageHealth:
        """The Sessions whose writes are failing now (from memory: never touches storage)."""
        if self._coordinator is None:
            return StorageHealth()
        return StorageHealth(tuple(self._coordinator.unconfirmed()))

    async def list_sessions(self, query: str | None = None) -> list[SessionSummary]:
        """Every stored Session, newest first, with live ones marked; with `query`, only
        those it matches (`SessionSummary.matches`: title, first message, id start)."""
        rows: dict[str, SessionSummary] = {}
        elsewhere = await self.leases.held_elsewhere()
        for item in await self.backend.list():
            if item.id in self._phantoms:
                continue
            live = self.live.find(item.id)
            rows[item.id] = (
                self.summary(live)
                if live is not None
                else SessionSummary(
                    item.id,
                    item.created_at,
                    item.id in elsewhere,  # live on another host
                    item.length,
                    item.lineage,
                    item.title,
                    item.preview,
                )
            )
        for session in self.live.live():
            if session.id not in rows:
                rows[session.id] = self.summary(session)
        chosen = [row for row in rows.values() if query is None or row.matches(query)]
        return sorted(chosen, key=lambda row: (row.created_at, row.id), reverse=True)

    def summary(self, session: Session) -> SessionSummary:
        """The list row of a live Session, with its plugins' compact summaries."""
        facts = SummaryFacts()
        for event in session.scan(types={SESSION_TITLE}, reverse=True):
            facts.add(event)
            break
        for event in session.scan(types={USER_MESSAGE}):
            facts.add(event)
            if facts.preview is not None:
                break
        live = self.live.is_live(session)
        return SessionSummary(
            session.id,
            session.header.created_at,
            live,
            len(session),
            session.header.lineage,
            facts.title,
            facts.preview,
            self._compact(session) if live else None,
        )

    def _compact(self, session: Session) -> dict[str, JsonValue]:
        """The plugins' `dsh_session_summary` of live `session`'s durable prefix, computed
        once per durable length and set of loaded plugins."""
        durable = 0 if self._coordinator is None else self._coordinator.durable_length(session)
        # As for client modules: the implementers cover plugins registered by hand.
        plugins = (
            self._loader.generation if self._loader is not None else -1,
            tuple(self.hooks.implementers("dsh_session_summary")),
        )
        key = (durable, plugins)
        held = self._compacts.get(session)
        if held is not None and held[0] == key:
            return held[1]
        log_ = session.prefix(durable)
        summaries = self.hooks.each(
            "dsh_session_summary", {"session": log_}, convert=_json, about=f"for session {log_.id}"
        )
        compact = {contribution.plugin: contribution.value for contribution in summaries}
        self._compacts[session] = (key, compact)
        return compact

    # -- plugin contributions --------------------------------------------

    def event_view(self, session: SessionLog, event: SessionEvent) -> dict[str, JsonValue] | None:
        """The first plugin view of a durable event, or None (`dsh_event_view`).

        `session` is the live Session (on the event loop), or a cold
        `StoredLog` (then this runs in a worker thread; see `dsh_event_view`).
        """
        found = self.hooks.first(
            "dsh_event_view",
            {"session": session, "event": event},
            convert=_json_object,
            about=f"for session {session.id} seq {event.seq}",
        )
        return None if found is None else found.value

    def client_modules(self) -> list[PublishedModule]:
        """Browser modules from every loaded plugin, in call order (`dsh_client_modules`).

        Computed once per set of loaded plugins, not per request.
        """
        # The loader's generation changes with every load and unload; the
        # implementers cover plugins a test registered with the manager by hand.
        key = (
            self._loader.generation if self._loader is not None else -1,
            tuple(self.hooks.implementers("dsh_client_modules")),
        )
        if self._modules is None or self._modules[0] != key:
            self._modules = (key, self._collect_modules())
        return list(self._modules[1])

    def _collect_modules(self) -> list[PublishedModule]:
        modules: list[PublishedModule] = []
        for contribution in self.hooks.each("dsh_client_modules", {}):
            for module in contribution.value or ():
                if isinstance(module, ClientModule):
                    modules.append(PublishedModule(contribution.plugin, module))
                else:
                    log.error(
                        "plugin %s returned %r from dsh_client_modules; expected ClientModule",
                        contribution.plugin,
                        module,
                    )
        return modules

    def wake_at(self, log: SessionLog) -> int | None:
        """When (epoch ms) a plugin first wants `log`'s Session live (`dsh_session_wake_at`).

        A plugin that fails counts as None, except when what failed is reading
        the log (a `StorageError` from a cold log): then no answer is known, and
        that error is raised once every plugin was asked.
        """
        unreadable: list[StorageError] = []

        def failed(plugin: str, hook: str, error: Exception) -> None:
            if isinstance(error, StorageError):
                unreadable.append(error)
            else:
                logging.getLogger(__name__).error(
                    "plugin %s failed in %s for session %s", plugin, hook, log.id, exc_info=error
                )

        times = self.hooks.each(
            "dsh_session_wake_at",
            {"session": log},
            convert=_epoch_ms,
            about=f"for session {log.id}",
            on_error=failed,
        )
        if unreadable:
            raise unreadable[0]
        return min((contribution.value for contribution in times), default=None)

    def session_state(self, log: SessionLog) -> dict[str, JsonValue]:
        """Every plugin's state of `log`'s Session, keyed by plugin name (`dsh_session_state`).

        `log` must hold only durable events; plugins returning None are left out.
        """
        states = self.hooks.each(
            "dsh_session_state", {"session": log}, convert=_json, about=f"for session {log.id}"
        )
        return {contribution.plugin: contribution.value for contribution in states}

    async def plugin_states(self, session_id: str) -> dict[str, JsonValue]:
        """`session_state` of a Session's durable events: live or cold, never starting an agent."""
        return await self.with_durable_log(session_id, self.session_state)

    async def session_wake_at(self, session_id: str) -> int | None:
        """`wake_at` of a Session's durable events: live or cold, never starting an agent."""
        return await self.with_durable_log(session_id, self.wake_at)

    async def with_durable_log(
        self,
        session_id: str,
        func: Callable[Concatenate[SessionLog, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """`func(log, ...)` on what hooks read of a Session; returns what it returns.

        The one place that chooses: a live Session's confirmed prefix (in
        memory: `func` runs here, on the event loop), or a cold Session's
        stored log (read ranged and type-filtered: `func` runs in a worker
        thread, so no read blocks the loop). Raises `SessionNotFound` or
        `InvalidSessionId`.
        """
        validate_session_id(session_id)
        live = self.live.find(session_id)
        if live is not None:
            return func(self.durable_log(live), *args, **kwargs)
        return await self.with_stored_log(session_id, func, *args, **kwargs)

    async def durable_log_of(self, session_id: str) -> SessionLog:
        """What hooks read of a Session: a live one's confirmed prefix, a cold one's stored log.

        A cold one's is a `StoredLog`: read it from a worker thread (prefer
        `with_durable_log`, which does). Raises `SessionNotFound` or
        `InvalidSessionId`.
        """
        validate_session_id(session_id)
        live = self.live.find(session_id)
        return self.durable_log(live) if live is not None else await self.stored_log(session_id)

    async def session_action(
        self, session_id: str, plugin: str, action: str, args: dict[str, JsonValue]
    ) -> JsonValue:
        """Run `plugin`'s action `action` on a Session (`dsh_session_action`); its JSON result.

        Resumes a cold Session first; one live on another host of a shared store
        runs there (`dsh.relay.actions`), and its answer is this one. Raises
        `ActionError` 404 for a plugin that is not loaded or has no such action,
        the plugin's own `CodedError` (`ActionError`, `ToolError`) for a
        refusal, and `ActionError` 500 `internal_error` (logged) when the plugin
        fails.
        """
        self._require_running()
        validate_session_id(session_id)
        if plugin not in self.hooks.implementers("dsh_session_action"):
            known = self.pm.get_plugin(plugin) is not None
            raise ActionError.not_found(
                f"plugin {plugin!r} has no actions"
                if known
                else f"no plugin {plugin!r} is loaded in this host",
                code="unknown_action" if known else "unknown_plugin",
            )
        for attempt in range(_ACTION_ATTEMPTS):
            try:
                agent, _ = await self.resume(session_id)
                break
            except SessionLiveElsewhere:
                if self.action_relay is None or attempt == _ACTION_ATTEMPTS - 1:
                    raise
                try:
                    return await self.action_relay.ask(session_id, plugin, action, args)
                except Unclaimed:
                    continue  # its owner let it go: make it live here
        what = f"action {action!r} of plugin {plugin!r} on session {session_id}"
        try:
            pending = self.hooks.call(
                plugin, "dsh_session_action", {"agent": agent, "name": action, "args": args}
            )
            if pending is None:
                raise ActionError.not_found(f"plugin {plugin!r} has no action {action!r}")
            if not inspect.isawaitable(pending):
                raise TypeError(
                    f"dsh_session_action returned {type(pending).__name__}, not an awaitable"
                )
            result = to_json(await pending, "result")
        except CodedError:
            raise
        except HookNotImplemented:  # unloaded while resuming
            raise ActionError.not_found(
                f"no plugin {plugin!r} is loaded in this host", code="unknown_plugin"
            ) from None
        except Exception as error:
            log.exception("%s failed", what)
            raise ActionError(
                "internal_error",
                f"{what} failed ({type(error).__name__}); see the server log",
                status=500,
            ) from error
        return result

    def cli_commands(
        self, register_for: Callable[[str], RegisterCommand], on_error: ErrorHandler
    ) -> None:
        """Ask every plugin for its `dsh` subcommands (`dsh_cli_commands`).

        `register_for(plugin)` is the `register` callback that plugin gets (it
        stamps the name); `on_error(plugin, hook, error)` hears of a plugin
        whose hook raised.
        """
        self.hooks.each(
            "dsh_cli_commands",
            lambda plugin: {"register": register_for(plugin)},
            on_error=on_error,
        )


async def read_stored(backend: Backend, session_id: str) -> StoredSession:
    """What `backend` stores for a Session; `SessionNotFound` if nothing."""
    validate_session_id(session_id)
    stored = await backend.inspect(session_id)
    if stored is None:
        raise SessionNotFound(f"no session {session_id!r}")
    return stored


async def stored_log(backend: Backend, session_id: str) -> SessionLog:
    """A cold Session's whole stored log, in memory, as a read-only `SessionLog`.

    For the command line (`dsh.commands`), whose plugin commands read a log
    on their own event loop; a Host reads through `Host.stored_log` instead.
    """
    stored = await read_stored(backend, session_id)
    return Session(stored.header, stored.events)


def _json(plugin: str, value: object) -> JsonValue:
    return to_json(value)


def _json_object(plugin: str, value: object) -> dict[str, JsonValue]:
    data = to_json(value)
    if not isinstance(data, dict):
        raise TypeError(f"expected a JSON object, got {type(value).__name__}")
    return data


def _epoch_ms(plugin: str, value: object) -> int:
    if type(value) is not int:
        raise TypeError(f"expected epoch milliseconds (an int), got {value!r}")
    return value


async def _dispose(disposer: Disposer) -> None:
    result = disposer()
    if inspect.isawaitable(result):
        await result
