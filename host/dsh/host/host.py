"""The Host: the composition root of one dsh process (or one test).

It wires the layers together and owns what they share (task group, live
Sessions, coordinator, plugin manager and loader, model adapter). Its parts,
each a module of its own: `liveness` (going live and cold, leases, the
per-Session lock), `sessions` (the operations by id), `catalogue` (every
read of storage), `contributions` (what the plugins say), `actions`,
`attention` (alerts and unread counts), `search` (every message, by its
words), `lifecycle` (waking and hibernating), and with a store several
hosts share, `relays` (inbox, actions, followers). Its own methods are the
few verbs a plugin's test or an embedding program uses, and what the wake
lifecycle and the relays need of a host (`LifecycleHost`, `RelayHost`).

    async with Host(backend=JsonlBackend(data_dir), model=DemoModel()) as host:
        agent = await host.create_session()

Closing it closes every agent (flushing its Session, retrying for at most
`close_retry_seconds`; `unstored` lists what could not be stored), unloads
the plugins newest first, stops the coordinator and closes the model
adapter. A Host that fails to start unwinds the same way.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any, Literal, Self

import anyio
import pluggy
from anyio.abc import TaskGroup
from pydantic import BaseModel, JsonValue

from ..agents.agent import DEFAULT_MAX_STEPS, Agent
from ..attention.backend import AttentionBackend
from ..attention.backends import attention_backend_for
from ..base.background import Background
from ..base.clock import Clock, SystemClock
from ..base.metrics import Metrics
from ..base.scope import Scope
from ..models.base import ModelAdapter
from ..models.registry import ModelContext, ModelSpec
from ..persistence.backend import Backend
from ..persistence.coordinator import PersistenceCoordinator
from ..persistence.leases import LeaseBackend
from ..persistence.location import location_of
from ..plugins import hookspecs
from ..plugins.context import PluginContext
from ..plugins.contributions import Contributions
from ..plugins.hooks import Hooks
from ..plugins.loader import PluginLoader, PluginSpec
from ..relay.relays import Relays
from ..search.backends import search_index_for
from ..session.live import LiveSessions
from ..session.log import Session, SessionLog
from ..wake.backend import WakeBackend
from ..wake.lifecycle import SessionLifecycle
from .actions import SessionActions
from .attention import Attention
from .catalogue.catalogue import Catalogue
from .heap import HeapPolicy
from .leases import LeaseKeeper, LeaseSettings
from .liveness import Liveness
from .metrics import HostMetrics
from .model import OwnedModel
from .search import Search
from .sessions import Sessions

__all__ = ["Host"]


class Host:
    """The composition root (see the module docstring)."""

    def __init__(
        self,
        *,
        backend: Backend,
        model: ModelAdapter | ModelSpec,
        plugins: Sequence[PluginSpec] = (),
        clock: Clock | None = None,
        cwd: str | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        close_retry_seconds: float = 0.0,
        clean_empty_sessions: bool = False,
        leases: LeaseBackend | None = None,
        lease_settings: LeaseSettings | None = None,
        wake_backend: WakeBackend | None = None,
        attention: AttentionBackend | None = None,
        idle_seconds: float | None = None,
        heap: HeapPolicy | None = None,
    ) -> None:
        self.clock: Clock = clock or SystemClock()
        self.backend = backend
        self.heap = heap
        self.cwd = cwd or os.getcwd()
        self.close_retry_seconds = close_retry_seconds
        self.clean_empty_sessions = clean_empty_sessions
        # Names this Host in leases and in messages ("session … is live on host …").
        self.host_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.lease_settings = lease_settings or LeaseSettings()
        self.leases = leases or backend.lease_backend(
            self.host_id, ttl=self.lease_settings.ttl_seconds
        )
        self.live = LiveSessions(self.clock)
        self.background = Background()  # what waits while a storm's dispatches are stored
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.hooks = Hooks(self.pm)
        self.scope = Scope("host")
        self.unstored: list[str] = []
        self._plugin_specs = tuple(plugins)
        self._loader: PluginLoader | None = None
        self._coordinator: PersistenceCoordinator | None = None
        self._keeper: LeaseKeeper | None = None
        self._group: TaskGroup | None = None
        self._stack: AsyncExitStack | None = None

        self.contributions = Contributions(self.hooks, lambda: self._loader)
        self._model = OwnedModel(
            model, lambda: ModelContext(self.clock, self.contributions.demo_skills)
        )
        self.catalogue = Catalogue(
            self.live, backend, self.leases, self.contributions, durable=self.durable_length,
            unconfirmed=lambda: self._coordinator.unconfirmed() if self._coordinator else (),
        )  # fmt: skip
        self.lifecycle = SessionLifecycle(
            self, wake_backend=wake_backend, idle_seconds=idle_seconds
        )
        self.metrics = Metrics()
        self.measures = HostMetrics(
            self.metrics, self.scope, self.live, self.catalogue, self.lifecycle
        )
        self.liveness = Liveness(
            live=self.live, backend=backend, model=lambda: self.measures.metered(self.model),
            clock=self.clock, leases=self.leases, lease_settings=self.lease_settings,
            lifecycle=self.lifecycle, contributions=self.contributions, catalogue=self.catalogue,
            max_steps=max_steps, clean_empty_sessions=clean_empty_sessions, heap=heap,
            background=self.background,
        )  # fmt: skip
        self.attention = Attention(
            attention or attention_backend_for(backend), self.live, self.contributions.alert,
            background=self.background,
        )  # fmt: skip
        self.search = Search(search_index_for(backend), self.live, backend, self.durable_length,
                             background=self.background)  # fmt: skip
        self.sessions = Sessions(
            self.liveness, self.catalogue, self.attention, self.search, cwd=self.cwd
        )
        self.actions = SessionActions(self.pm, self.hooks, self.sessions.resume, self.liveness)
        self.relays = Relays()  # with a store several hosts share: started with the Host

    async def __aenter__(self) -> Self:
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            if self.heap is not None:
                stack.enter_context(self.heap.installed(self.live))
            group = self._group = await stack.enter_async_context(anyio.create_task_group())
            self.background.start(group)
            self._coordinator = PersistenceCoordinator(
                self.live, self.backend, group, clock=self.clock,
                close_retry_seconds=self.close_retry_seconds,
                on_refused=self.liveness.writes_refused,
                append_seconds=self.measures.append_seconds.observe,
            )  # fmt: skip
            self._keeper = self.liveness.start(group, self._coordinator)
            self._loader = PluginLoader(self.pm, self._plugin_context)
            await self._loader.load_all(self._plugin_specs)
            self._model.resolve(self.contributions.model_choices)
            self.attention.start(group)
            await self.search.start(group)
            await self.lifecycle.start(group)
            relays = self.relays = Relays.start(self, self.backend, group)
            self.sessions.inbox, self.actions.relay = relays.inbox, relays.actions
        except BaseException as error:
            try:
                await self._unwind(stack, "host failed to start")
            except Exception as unwind_error:
                error.add_note(f"while unwinding the host: {unwind_error!r}")
            raise
        self._stack = stack
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every agent (flushing its Session), unload plugins, stop persistence."""
        if self._stack is None:
            return
        stack, self._stack = self._stack, None
        await self._unwind(stack, "host closing")

    async def _unwind(self, stack: AsyncExitStack, reason: str) -> None:
        """Stop everything (shielded), cancel the task group with `reason`, leave it."""
        self.liveness.stop()
        try:
            with anyio.CancelScope(shield=True):
                await self._teardown()
        finally:
            if self._group is not None:
                self._group.cancel_scope.cancel(reason)
            await stack.__aexit__(None, None, None)

    async def _teardown(self) -> None:
        self.relays.stop()
        self.lifecycle.stop()
        self.unstored.extend(await self.liveness.close_all())
        await self.attention.aclose(drain_seconds=self.close_retry_seconds + 1)
        await self.search.aclose()
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
                await self._model.aclose()

    def _plugin_context(self, name: str, config: BaseModel | None) -> PluginContext[Any]:
        assert self._group is not None
        return PluginContext(
            name=name, config=config, scope=self.scope.child(f"plugin {name}"), live=self.live,
            clock=self.clock, group=self._group, wakes_cold_sessions=self.lifecycle.wakes,
            metrics=self.metrics, storage=location_of(self.backend), alerts=self.attention,
            actions=self.actions,
        )  # fmt: skip

    @property
    def loader(self) -> PluginLoader:
        self.liveness.require_running()
        assert self._loader is not None
        return self._loader

    @property
    def coordinator(self) -> PersistenceCoordinator:
        self.liveness.require_running()
        assert self._coordinator is not None
        return self._coordinator

    @property
    def model(self) -> ModelAdapter:
        """The model adapter (one a plugin offers is known once the Host started)."""
        return self._model.adapter

    def durable_length(self, session: Session) -> int:
        """How many events of live `session` the write path confirmed (0 before start)."""
        return 0 if self._coordinator is None else self._coordinator.durable_length(session)

    # -- the verbs (each one its part's) ------------------------------------------------

    def agent(self, session_id: str) -> Agent | None:
        """The live agent of this Session, if it is live."""
        return self.liveness.agent(session_id)

    def agents(self) -> list[Agent]:
        return self.liveness.agents()

    def owns(self, session_id: str) -> bool:
        """True while this Host holds the Session's lease."""
        return self.liveness.owns(session_id)

    async def create_session(
        self, *, origin: Literal["web", "cli", "fork", "api"] = "web"
    ) -> Agent:
        """A new live Session and its root agent, stored before this returns."""
        return await self.sessions.create(origin=origin)

    async def resume(self, session_id: str) -> tuple[Agent, bool]:
        """Make a stored Session live: `(agent, resumed)` (`Sessions.resume`)."""
        return await self.sessions.resume(session_id)

    async def close_session(self, session_id: str, *, clean: bool = True) -> None:
        """Close the agent and make the Session cold (`Liveness.close`)."""
        await self.liveness.close(session_id, clean=clean)

    def wake_at(self, log: SessionLog) -> int | None:
        """When a plugin first wants `log`'s Session live (`Contributions.wake_at`)."""
        return self.contributions.wake_at(log)

    async def session_wake_at(self, session_id: str) -> int | None:
        """`wake_at` of a Session's durable events, live or cold (`Catalogue.wake_at`)."""
        return await self.catalogue.wake_at(session_id)

    async def plugin_states(self, session_id: str) -> dict[str, JsonValue]:
        """Every plugin's state of a Session, live or cold (`Catalogue.states`)."""
        return await self.catalogue.states(session_id)

    async def stored_ids(self) -> list[str]:
        """The id of every stored Session (what the wake index rebuilds from)."""
        return [row.id for row in await self.catalogue.list()]
