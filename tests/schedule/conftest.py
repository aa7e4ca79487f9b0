"""A small Host for schedule tests: real store, agents and hooks; fake time, storage and model.

- `DurableListener` stands in for persistence: its `flush` acknowledges
  (True), refuses (False) or raises, as the test scripts it, and can be held
  open to catch the plugin mid-barrier.
- `FakeModel` is a `ModelAdapter` that plays scripted replies and can pause
  inside a turn.
- `Harness` owns a `LiveSessions` on a `FakeClock`, a pluggy
  `PluginManager("dsh")` with the real hookspecs and one `SchedulePlugin`,
  and opens real `Agent`s in one anyio task group; `publish(agent)` calls the
  hook exactly as a Host does.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import httpx
import pluggy
import pytest
from anyio.abc import TaskGroup
from pydantic import JsonValue

from dsh.agents.agent import Agent
from dsh.agents.tools import ToolContext, ToolOutcome, invoke_tool
from dsh.base.background import Background
from dsh.base.scope import Scope
from dsh.models.base import DeltaSink, ModelReply, ModelRequest, ToolCall
from dsh.plugins import hookspecs
from dsh.plugins.context import PluginContext
from dsh.plugins.overlay import PluginSpec
from dsh.session.event import SessionEvent
from dsh.session.live import LiveSessions
from dsh.session.log import Session
from dsh.testing import FakeClock, running_host
from dsh.web import WebSettings, create_app
from dsh_tool_schedule import ScheduleConfig, SchedulePlugin
from dsh_tool_schedule.protocol import EVENT_TYPE
from tests.support.deadlines import WAIT

START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z, FakeClock's default
Outcome = Literal["ok", "refuse", "raise"]


class StorageDown(Exception):
    """What a failing test listener raises from `flush`."""


@dataclass
class Hold:
    """A paused flush: `entered` is set once a flush waits on it; `release()` lets it finish."""

    entered: anyio.Event = field(default_factory=anyio.Event)
    released: anyio.Event = field(default_factory=anyio.Event)

    def release(self) -> None:
        self.released.set()


class DurableListener:
    """A store listener whose flush acknowledges, refuses or raises on demand.

    `mode` is the standing answer; `script(...)` queues answers for the next
    flushes; `hold()` pauses the next flush until the hold is released.
    `marks` records the Session's length at each flush.
    """

    def __init__(self) -> None:
        self.mode: Outcome = "ok"
        self.flushes = 0
        self.marks: list[int] = []
        self.appended: list[SessionEvent] = []
        self._script: deque[Outcome] = deque()
        self._holds: deque[Hold] = deque()

    def script(self, *outcomes: Outcome) -> None:
        self._script.extend(outcomes)

    def hold(self) -> Hold:
        hold = Hold()
        self._holds.append(hold)
        return hold

    def on_append(self, session: Session, event: SessionEvent) -> None:
        self.appended.append(event)

    async def flush(self, session: Session) -> bool | None:
        self.flushes += 1
        self.marks.append(len(session))
        outcome = self._script.popleft() if self._script else self.mode
        if self._holds:
            hold = self._holds.popleft()
            hold.entered.set()
            await hold.released.wait()
        if outcome == "raise":
            raise StorageDown("disk on fire")
        return outcome == "ok"


Step = ModelReply | Exception | Callable[[], Awaitable[ModelReply]]


class FakeModel:
    """A scripted `ModelAdapter`: plays `steps` in order, then answers "ok"."""

    name = "fake"

    def __init__(self, *steps: Step) -> None:
        self.steps: deque[Step] = deque(steps)
        self.requests: list[ModelRequest] = []

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        self.requests.append(request)
        step = self.steps.popleft() if self.steps else ModelReply(text="ok")
        if isinstance(step, Exception):
            raise step
        if isinstance(step, ModelReply):
            return step
        return await step()


def tool_call(name: str, call_id: str = "c1", **arguments: Any) -> ModelReply:
    """A reply that asks for one tool call."""
    return ModelReply(text="", tool_calls=(ToolCall(id=call_id, name=name, arguments=arguments),))


class Harness:
    """One simulated Host (see the module docstring)."""

    def __init__(
        self, group: TaskGroup, clock: FakeClock, config: ScheduleConfig | None = None
    ) -> None:
        self.group = group
        self.clock = clock
        self.live = LiveSessions(clock)
        self.pm = pluggy.PluginManager("dsh")
        self.pm.add_hookspecs(hookspecs)
        self.plugin_scope = Scope("plugin tool-schedule")
        self.context = PluginContext(
            name="tool-schedule",
            config=config,
            scope=self.plugin_scope,
            live=self.live,
            clock=clock,
            group=group,
        )
        self.plugin = SchedulePlugin(self.context)
        self.pm.register(self.plugin, name="tool-schedule")
        self.agents: list[Agent] = []
        # One per host: every agent's follow-up turns wait for the dispatches in flight.
        self.background = Background(patience=3600)
        self.listeners: dict[Session, DurableListener] = {}
        self._ids = 0

    def new_session(self) -> Session:
        self._ids += 1
        return Session.new(f"s{self._ids}", cwd="/work", created_at=self.clock.wall_ms())

    def open(
        self,
        session: Session | None = None,
        *,
        model: FakeModel | None = None,
        parent: Agent | None = None,
        publish: bool = True,
    ) -> Agent:
        """Make `session` live with a durable listener, build its agent, publish it (by default)."""
        session = session if session is not None else self.new_session()
        self.live.open(session)
        listener = DurableListener()
        self.live.add_listener(session, listener)
        self.listeners[session] = listener
        agent = Agent(
            session=session,
            live=self.live,
            model=model or FakeModel(),
            group=self.group,
            clock=self.clock,
            parent=parent,
            background=self.background,
        )
        self.agents.append(agent)
        if publish:
            self.publish(agent)
        return agent

    def publish(self, agent: Agent) -> None:
        self.pm.hook.dsh_agent_published(agent=agent)

    def listener(self, agent: Agent) -> DurableListener:
        return self.listeners[agent.session]

    async def call(self, agent: Agent, name: str, **arguments: Any) -> ToolOutcome:
        """Run one tool call through the real pipeline, outside a turn."""
        ctx = ToolContext(agent=agent, session=agent.session, live=self.live, clock=self.clock)
        return await invoke_tool(agent.tools, ToolCall(id="t", name=name, arguments=arguments), ctx)

    async def value(self, agent: Agent, name: str, **arguments: Any) -> Any:
        """The value of a call that must succeed."""
        outcome = await self.call(agent, name, **arguments)
        assert outcome.error is None, outcome.error
        return outcome.value

    async def error(self, agent: Agent, name: str, **arguments: Any) -> dict[str, str]:
        """The error of a call that must fail."""
        outcome = await self.call(agent, name, **arguments)
        assert outcome.error is not None, outcome.value
        return outcome.error

    async def aclose(self) -> None:
        for agent in reversed(self.agents):
            await agent.aclose()
        await self.plugin_scope.aclose()


def data(event: SessionEvent) -> dict[str, Any]:
    """An event's data, which must be a JSON object."""
    assert isinstance(event.data, dict)
    return event.data


def changes(session: Session) -> list[JsonValue]:
    """The data of every `schedule/change` event, in order."""
    return [event.data for event in session.events if event.type == EVENT_TYPE]


def dispatches(session: Session) -> list[SessionEvent]:
    """The `schedule/change` events whose change is `dispatch`."""
    return [
        event
        for event in session.events
        if event.type == EVENT_TYPE and data(event).get("change") == "dispatch"
    ]


def reminder_messages(session: Session) -> list[SessionEvent]:
    """The `message/user` events queued by the schedule plugin."""
    return [
        event
        for event in session.events
        if event.type == "message/user" and data(event)["source"].get("kind") == "schedule"
    ]


async def settle() -> None:
    """Let every task run until all are blocked (on fake time, holds or events).

    One `wait_all_tasks_blocked()` can return while a finished child's done
    callback is still queued (its parent looks blocked on a pending future),
    so a few rounds are taken; each costs one checkpoint once all is quiet.
    """
    with anyio.fail_after(WAIT):
        for _ in range(5):
            await anyio.wait_all_tasks_blocked()


async def advance(clock: FakeClock, seconds: float) -> None:
    """Move fake time and let the woken tasks run."""
    await settle()
    clock.advance(seconds)
    await settle()


async def eventually(predicate: Callable[[], bool]) -> None:
    """Wait (with a deadline, never a fixed sleep) until `predicate()` holds."""
    with anyio.fail_after(WAIT):
        while not predicate():
            await anyio.lowlevel.checkpoint()


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    async with anyio.create_task_group() as group:
        host = Harness(group, FakeClock(START_MS))
        try:
            yield host
        finally:
            with anyio.fail_after(WAIT):
                await host.aclose()
            group.cancel_scope.cancel()


# -- end to end: a real Host and its HTTP API ---------------------------------------------


@pytest.fixture
async def api() -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    clock = FakeClock(START_MS)
    spec = PluginSpec("tool-schedule", config={"min_interval_seconds": 60})
    async with running_host(clock=clock, plugins=[spec]) as host:
        app = create_app(host, WebSettings(token="t"))
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(
            transport=transport,
            base_url="http://127.0.0.1:8765",
            headers={"Authorization": "Bearer t"},
        ) as http:
            yield host, http


async def post_action(http: httpx.AsyncClient, session_id: str, action: str, **args: Any) -> Any:
    return await http.post(
        f"/api/sessions/{session_id}/actions",
        json={"plugin": "tool-schedule", "action": action, "args": args},
    )


def tool_context(agent: Agent) -> ToolContext:
    """What a tool run outside a turn is given."""
    return ToolContext(agent=agent, session=agent.session, live=agent.live, clock=agent.clock)
