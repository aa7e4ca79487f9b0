from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import pytest
from pydantic import JsonValue

from dsh.agents.agent import DEFAULT_MAX_STEPS, Agent, AgentPhase
from dsh.agents.errors import AgentBusy, AgentClosed
from dsh.agents.tools import Tool, ToolArguments, ToolContext
from dsh.base.background import Background
from dsh.base.limits import MAX_ARGUMENTS_BYTES, MAX_DEPTH, MAX_TEXT_BYTES, MAX_TOOL_CALLS
from dsh.models.base import DeltaSink, ModelReply, ModelRequest, ToolCall, reasoning_channel
from dsh.models.errors import ModelError
from dsh.session.event import SessionEvent
from dsh.session.live import LiveSessions
from dsh.session.log import Session
from dsh.testing import FakeClock
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio

Step = (
    ModelReply | BaseException | Callable[[ModelRequest, DeltaSink | None], Awaitable[ModelReply]]
)


class FakeModel:
    """Answers from a queue of steps; once empty it answers "done"."""

    name = "fake"

    def __init__(self, *steps: Step) -> None:
        self.steps: deque[Step] = deque(steps)
        self.requests: list[ModelRequest] = []

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        self.requests.append(request)
        await anyio.lowlevel.checkpoint()
        step = self.steps.popleft() if self.steps else ModelReply(text="done")
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, ModelReply):
            return step
        return await step(request, on_delta)


class Gate:
    """A model step that blocks until released, so a test can look inside a turn."""

    def __init__(self, reply: ModelReply | None = None) -> None:
        self.entered = anyio.Event()
        self.release = anyio.Event()
        self.reply = reply or ModelReply(text="released")

    async def __call__(self, request: ModelRequest, on_delta: DeltaSink | None) -> ModelReply:
        self.entered.set()
        await self.release.wait()
        return self.reply


class NoArgs(ToolArguments):
    pass


class NoteTool(Tool[NoArgs]):
    name = "note"
    description = "returns a fixed note"
    arguments = NoArgs

    def __init__(self) -> None:
        self.calls = 0

    async def run(self, args: NoArgs, ctx: ToolContext) -> JsonValue:
        self.calls += 1
        return {"note": self.calls}


class BlockingTool(Tool[NoArgs]):
    name = "block"
    description = "blocks until released"
    arguments = NoArgs

    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.release = anyio.Event()
        self.finished: list[str] = []

    async def run(self, args: NoArgs, ctx: ToolContext) -> JsonValue:
        self.entered.set()
        try:
            await self.release.wait()
        finally:
            self.finished.append("finally")
        return "unblocked"


def call(name: str, call_id: str = "c1", arguments: Any = "{}") -> ToolCall:
    return ToolCall(call_id, name, arguments)


class Harness:
    def __init__(self, group: anyio.abc.TaskGroup) -> None:
        self.group = group
        self.clock = FakeClock()
        self.live = LiveSessions(self.clock)
        self.agents: list[Agent] = []

    def agent(
        self, model: Any, session_id: str = "s1", depth: int | None = None, **options: Any
    ) -> Agent:
        session = Session.new(
            session_id, cwd="/", created_at=self.clock.wall_ms(), delegation_depth=depth
        )
        self.live.open(session)
        agent = Agent(session=session, live=self.live, model=model, group=self.group, **options)
        self.agents.append(agent)
        return agent


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    async with anyio.create_task_group() as group:
        harness = Harness(group)
        yield harness
        for agent in harness.agents:
            await agent.aclose()


def types(agent: Agent) -> list[str]:
    return [event.type for event in agent.session.events]


def data(agent: Agent, type: str) -> list[Any]:
    return [event.data for event in agent.session.events if event.type == type]


async def turn(agent: Agent, text: str) -> None:
    """Submit and wait (with a deadline) for the turn to finish."""
    agent.submit(text)
    with anyio.fail_after(WAIT):
        await agent.when_idle()


async def until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(WAIT):
        while not condition():
            await anyio.lowlevel.checkpoint()


# -- a turn ------------------------------------------------------------------


async def test_a_turn_appends_the_user_message_the_reply_and_an_ok_turn_end(
    harness: Harness,
) -> None:
    agent = harness.agent(FakeModel(ModelReply(text="hi there")))

    await turn(agent, "hello")

    assert types(agent) == ["message/user", "message/assistant", "turn/end"]
    assert data(agent, "message/user") == [{"text": "hello", "source": {"kind": "user"}}]
    assert data(agent, "message/assistant") == [{"text": "hi there", "toolCalls": []}]
    assert data(agent, "turn/end") == [{"status": "ok"}]
    assert agent.phase is AgentPhase.IDLE


async def test_a_user_message_keeps_the_zone_it_was_written_in(harness: Harness) -> None:
    agent = harness.agent(FakeModel(ModelReply(text="ok")))

    agent.submit("at nine?", time_zone="Europe/Berlin")
    with anyio.fail_after(WAIT):
        await agent.when_idle()

    assert data(agent, "message/user") == [
        {"text": "at nine?", "source": {"kind": "user"}, "timeZone": "Europe/Berlin"}
    ]


async def test_a_log_the_model_cannot_be_told_ends_the_turn_with_an_error_naming_the_event(
    harness: Harness,
) -> None:
    agent = harness.agent(FakeModel(ModelReply(text="never asked")))
    harness.live.append(agent.session, "tool/result", {"callId": "c", "name": "t"})

    await turn(agent, "hello")

    assert types(agent) == ["tool/result", "message/user", "turn/end"]
    [end] = data(agent, "turn/end")
    assert end["error"]["code"] == "session_log_invalid"
    assert "event 0 (tool/result)" in end["error"]["message"]


async def test_tool_calls_run_through_the_pipeline_until_the_model_stops_calling(
    harness: Harness,
) -> None:
    model = FakeModel(
        ModelReply(text="", tool_calls=(call("note", "a"), call("missing", "b"))),
        ModelReply(text="noted"),
    )
    agent = harness.agent(model)
    agent.tools.register(NoteTool())

    await turn(agent, "take a note")

    assert types(agent) == [
        "message/user",
        "message/assistant",
        "tool/result",
        "tool/result",
        "message/assistant",
        "turn/end",
    ]
    first, second = data(agent, "tool/result")
    assert first == {"callId": "a", "name": "note", "value": {"note": 1}}
    assert second["error"]["code"] == "unknown_tool"
    # The second request carries the whole conversation and the tool schemas.
    request = model.requests[1]
    assert [message.role for message in request.messages] == ["user", "assistant", "tool", "tool"]
    assert [tool["function"]["name"] for tool in request.tools] == ["note"]
    assert request.session_id == "s1"


@pytest.mark.parametrize(
    ("arguments", "stored"),
    [
        ('{"a": 1}', {"a": 1}),
        ({"a": 1}, {"a": 1}),
        ("not json", "not json"),
        ("[1]", "[1]"),
    ],
)
async def test_tool_call_arguments_are_stored_as_an_object_when_they_parse_else_raw(
    harness: Harness, arguments: Any, stored: Any
) -> None:
    model = FakeModel(ModelReply(tool_calls=(call("note", arguments=arguments),)))
    agent = harness.agent(model)

    await turn(agent, "go")

    [assistant, _] = data(agent, "message/assistant")
    assert assistant["toolCalls"] == [{"id": "c1", "name": "note", "arguments": stored}]


async def test_the_phase_is_turn_while_the_model_works(harness: Harness) -> None:
    gate = Gate()
    agent = harness.agent(FakeModel(gate))
    phases = [agent.phase]

    agent.submit("hello")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()
    phases.append(agent.phase)
    assert phases == [AgentPhase.IDLE, AgentPhase.TURN]
    assert types(agent) == ["message/user"]

    gate.release.set()
    with anyio.fail_after(WAIT):
        await agent.when_idle()
    assert agent.phase is AgentPhase.IDLE


async def test_an_agent_reports_its_root_status_pending_input_and_phase(harness: Harness) -> None:
    root = harness.agent(FakeModel())
    child = harness.agent(FakeModel(), "child", depth=1, parent=root)

    assert root.is_root
    assert not child.is_root
    assert repr(root) == "<Agent s1 idle>"
    root.submit("queued")
    assert root.pending == 1
    with anyio.fail_after(WAIT):
        await root.when_idle()
    assert root.pending == 0


async def test_root_status_follows_the_durable_delegation_depth_not_the_parent(
    harness: Harness,
) -> None:
    resumed_child = harness.agent(FakeModel(), "resumed-child", depth=2)
    explicit_root = harness.agent(FakeModel(), "explicit-root", depth=0)

    assert not resumed_child.is_root
    assert explicit_root.is_root


async def test_a_child_agent_must_be_deeper_than_its_parent(harness: Harness) -> None:
    root = harness.agent(FakeModel())
    with pytest.raises(ValueError, match="has delegationDepth 0, its parent 0"):
        harness.agent(FakeModel(), "flat", parent=root)


def test_max_steps_must_be_at_least_one() -> None:
    with pytest.raises(ValueError, match="max_steps must be at least 1"):
        Agent(
            session=Session.new("s", cwd="/", created_at=0),
            live=LiveSessions(FakeClock()),
            model=FakeModel(),
            group=None,  # type: ignore[arg-type]
            max_steps=0,
        )


# -- model failures and the step bound ---------------------------------------


async def test_a_model_error_ends_the_turn_with_its_code_and_keeps_earlier_events(
    harness: Harness,
) -> None:
    model = FakeModel(
        ModelReply(text="first answer"),
        ModelReply(tool_calls=(call("note"),)),
        ModelError("model_unavailable", "no model is configured"),
    )
    agent = harness.agent(model)
    agent.tools.register(NoteTool())

    await turn(agent, "one")
    await turn(agent, "two")

    assert types(agent) == [
        "message/user",
        "message/assistant",
        "turn/end",
        "message/user",
        "message/assistant",
        "tool/result",
        "turn/end",
    ]
    assert data(agent, "turn/end") == [
        {"status": "ok"},
        {
            "status": "error",
            "error": {"code": "model_unavailable", "message": "no model is configured"},
        },
    ]


async def test_an_unexpected_model_exception_ends_the_turn_as_model_failed_and_is_logged(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    agent = harness.agent(FakeModel(RuntimeError("socket closed")))

    with caplog.at_level(logging.ERROR, logger="dsh.agents.agent"):
        await turn(agent, "hello")

    assert types(agent) == ["message/user", "turn/end"]
    assert data(agent, "turn/end") == [
        {
            "status": "error",
            "error": {"code": "model_failed", "message": "RuntimeError: socket closed"},
        }
    ]
    assert any(record.exc_info for record in caplog.records)


async def test_arguments_that_are_not_json_are_refused_and_the_reply_kept(
    harness: Harness,
) -> None:
    agent = harness.agent(FakeModel(ModelReply(tool_calls=(call("note", arguments={"bad": {1}}),))))
    agent.tools.register(NoteTool())

    await turn(agent, "hello")

    expected = ["message/user", "message/assistant", "tool/result", "message/assistant"]
    assert types(agent) == [*expected, "turn/end"]
    [result] = data(agent, "tool/result")
    assert result["error"]["code"] == "invalid_arguments"
    assert "arguments.bad: set is not JSON" in result["error"]["message"]


async def test_a_reply_that_cannot_be_stored_still_ends_the_turn_with_an_error(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    unstorable = ModelReply(tool_calls=(ToolCall(7, "note", "{}"),))  # type: ignore[arg-type]
    agent = harness.agent(FakeModel(unstorable))

    with caplog.at_level(logging.ERROR, logger="dsh.agents.agent"):
        await turn(agent, "hello")

    assert types(agent) == ["message/user", "turn/end"]
    [end] = data(agent, "turn/end")
    assert end["status"] == "error"
    assert end["error"]["code"] == "internal_error"
    assert "turn failed in session s1" in caplog.text
    # The agent keeps working afterwards.
    await turn(agent, "again")
    assert data(agent, "turn/end")[-1] == {"status": "ok"}


async def test_the_step_loop_stops_after_the_default_bound_with_max_steps(
    harness: Harness,
) -> None:
    model = FakeModel(*[ModelReply(tool_calls=(call("note", f"c{n}"),)) for n in range(20)])
    agent = harness.agent(model)
    agent.tools.register(NoteTool())

    await turn(agent, "loop forever")

    assert DEFAULT_MAX_STEPS == 8
    assert len(model.requests) == 8
    assert types(agent).count("message/assistant") == 8
    assert types(agent).count("tool/result") == 8
    [end] = data(agent, "turn/end")
    assert end["status"] == "error"
    assert end["error"]["code"] == "max_steps"
    assert "8 steps" in end["error"]["message"]


async def test_a_custom_step_bound_is_respected(harness: Harness) -> None:
    model = FakeModel(*[ModelReply(tool_calls=(call("note"),)) for _ in range(5)])
    agent = harness.agent(model, max_steps=2)

    await turn(agent, "loop")

    assert len(model.requests) == 2
    assert data(agent, "turn/end")[0]["error"]["code"] == "max_steps"


# -- input -------------------------------------------------------------------


async def test_followup_is_synchronous_and_keeps_order(harness: Harness) -> None:
    agent = harness.agent(FakeModel())

    agent.followup("one", {"kind": "schedule"})
    agent.followup("two", {"kind": "schedule", "id": "rem-1"})
    agent.submit("three")
    assert agent.pending >= 2  # queued before any task ran
    await until(lambda: types(agent).count("turn/end") == 3)

    assert data(agent, "message/user") == [
        {"text": "one", "source": {"kind": "schedule"}},
        {"text": "two", "source": {"kind": "schedule", "id": "rem-1"}},
        {"text": "three", "source": {"kind": "user"}},
    ]


@pytest.mark.parametrize("source", [{}, {"kind": 3}, "schedule", None])
async def test_followup_needs_a_source_with_a_string_kind(harness: Harness, source: Any) -> None:
    agent = harness.agent(FakeModel())

    with pytest.raises(TypeError, match="string 'kind'"):
        agent.followup("x", source)
    assert agent.pending == 0


async def test_message_text_must_be_a_string(harness: Harness) -> None:
    agent = harness.agent(FakeModel())

    with pytest.raises(TypeError, match="must be a string"):
        agent.submit(42)  # type: ignore[arg-type]


async def test_input_is_refused_after_close(harness: Harness) -> None:
    agent = harness.agent(FakeModel())
    await agent.aclose()

    with pytest.raises(AgentClosed):
        agent.followup("late", {"kind": "schedule"})
    with pytest.raises(AgentClosed):
        agent.submit("late")
    assert agent.phase is AgentPhase.CLOSED
    assert agent.closed


# -- maintenance -------------------------------------------------------------


async def test_maintenance_holds_the_maintenance_phase_and_returns_the_task_value(
    harness: Harness,
) -> None:
    agent = harness.agent(FakeModel())
    seen: list[AgentPhase] = []

    async def task() -> str:
        seen.append(agent.phase)
        await anyio.lowlevel.checkpoint()
        return "done"

    assert await agent.run_maintenance(task) == "done"
    assert seen == [AgentPhase.MAINTENANCE]
    assert agent.phase is AgentPhase.IDLE


async def test_a_failing_maintenance_task_raises_and_releases_the_agent(harness: Harness) -> None:
    agent = harness.agent(FakeModel())

    async def task() -> None:
        raise LookupError("fold broke")

    with pytest.raises(LookupError, match="fold broke"):
        await agent.run_maintenance(task)
    assert agent.phase is AgentPhase.IDLE
    await turn(agent, "still works")
    assert data(agent, "turn/end") == [{"status": "ok"}]


async def test_maintenance_is_refused_during_a_turn(harness: Harness) -> None:
    gate = Gate()
    agent = harness.agent(FakeModel(gate))
    agent.submit("hello")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()

    async def task() -> None:
        raise AssertionError("unreachable: must not run during a turn")

    with pytest.raises(AgentBusy, match="in turn"):
        await agent.run_maintenance(task)
    gate.release.set()


async def test_maintenance_is_refused_during_other_maintenance(harness: Harness) -> None:
    agent = harness.agent(FakeModel())
    refused: list[Exception] = []

    async def inner() -> None:
        raise AssertionError("unreachable: must not run during other maintenance")

    async def outer() -> None:
        try:
            await agent.run_maintenance(inner)
        except AgentBusy as error:
            refused.append(error)

    await agent.run_maintenance(outer)

    assert len(refused) == 1
    assert "in maintenance" in str(refused[0])


async def test_maintenance_is_refused_once_closed(harness: Harness) -> None:
    agent = harness.agent(FakeModel())
    await agent.aclose()

    async def task() -> None:
        raise AssertionError("unreachable: must not run after close")

    with pytest.raises(AgentClosed):
        await agent.run_maintenance(task)


async def test_input_during_maintenance_is_parked_and_runs_right_after_in_order(
    harness: Harness,
) -> None:
    agent = harness.agent(FakeModel())
    during: list[list[str]] = []

    async def task() -> None:
        agent.submit("typed by the user")
        agent.followup("reminder frame", {"kind": "schedule"})
        for _ in range(10):
            await anyio.lowlevel.checkpoint()
        during.append(types(agent))

    await agent.run_maintenance(task)
    await until(lambda: types(agent).count("turn/end") == 2)

    assert during == [[]]
    # The maintenance task's own follow-up goes first: it belongs between the turns.
    assert [item["text"] for item in data(agent, "message/user")] == [
        "reminder frame",
        "typed by the user",
    ]


async def test_a_waiting_maintenance_claim_goes_before_queued_input(harness: Harness) -> None:
    gate = Gate()
    agent = harness.agent(FakeModel(gate))
    agent.submit("first")
    await until(lambda: gate.entered.is_set())
    agent.submit("second")
    agent.submit("third")
    phases: list[tuple[str, int]] = []

    async def deliver() -> str:
        phases.append((agent.phase.value, agent.pending))
        agent.followup("reminder", {"kind": "schedule"})
        return "delivered"

    async with anyio.create_task_group() as group:

        async def claim() -> None:
            assert await agent.run_maintenance(deliver, wait=True) == "delivered"

        group.start_soon(claim)
        await until(lambda: len(agent._claims) == 1)
        with pytest.raises(AgentBusy):
            await agent.run_maintenance(deliver)
        gate.release.set()
    await until(lambda: types(agent).count("turn/end") == 4)

    assert phases == [("maintenance", 2)]
    assert [item["text"] for item in data(agent, "message/user")] == [
        "first",
        "reminder",
        "second",
        "third",
    ]


async def test_waiting_claims_are_served_oldest_first_one_at_a_time(harness: Harness) -> None:
    gate = Gate()
    agent = harness.agent(FakeModel(gate))
    agent.submit("busy")
    await until(lambda: gate.entered.is_set())
    order: list[str] = []

    def task(name: str) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            order.append(f"{name} starts in {agent.phase.value}")
            await anyio.lowlevel.checkpoint()
            order.append(f"{name} ends")

        return run

    async with anyio.create_task_group() as group:
        for name in ("a", "b"):
            group.start_soon(lambda name=name: agent.run_maintenance(task(name), wait=True))
            await until(lambda name=name: len(agent._claims) == "ab".index(name) + 1)
        gate.release.set()

    assert order == ["a starts in maintenance", "a ends", "b starts in maintenance", "b ends"]
    assert agent.phase is AgentPhase.IDLE


async def test_a_claim_cancelled_while_waiting_or_just_after_its_grant_is_passed_on(
    harness: Harness,
) -> None:
    release = anyio.Event()
    scope = anyio.CancelScope()

    async def end_turn_cancelling_the_claimant(
        request: ModelRequest, on_delta: DeltaSink | None
    ) -> ModelReply:
        await release.wait()
        # No await from here to the end of the turn: the claim is granted while
        # its claimant's cancellation is already on its way.
        scope.cancel()
        return ModelReply(text="released")

    agent = harness.agent(FakeModel(end_turn_cancelling_the_claimant))
    agent.submit("busy")
    await until(lambda: agent.phase is AgentPhase.TURN)
    ran: list[str] = []

    async def record() -> None:
        ran.append("ran")

    with anyio.move_on_after(0):
        await agent.run_maintenance(record, wait=True)
    assert list(agent._claims) == []

    async def claim_then_leave() -> None:
        with scope:
            await agent.run_maintenance(record, wait=True)

    async with anyio.create_task_group() as group:
        group.start_soon(claim_then_leave)
        await until(lambda: len(agent._claims) == 1)
        agent.submit("queued")
        release.set()

    await until(lambda: types(agent).count("turn/end") == 2)
    assert ran == []
    assert [item["text"] for item in data(agent, "message/user")] == ["busy", "queued"]


async def test_closing_the_agent_refuses_a_waiting_claim(harness: Harness) -> None:
    gate = Gate()
    agent = harness.agent(FakeModel(gate))
    agent.submit("busy")
    await until(lambda: gate.entered.is_set())
    outcomes: list[str] = []

    async def never() -> None:
        raise AssertionError("unreachable: the claim is refused")

    async def claim() -> None:
        try:
            await agent.run_maintenance(never, wait=True)
        except AgentClosed as error:
            outcomes.append(str(error))

    async with anyio.create_task_group() as group:
        group.start_soon(claim)
        await until(lambda: len(agent._claims) == 1)
        await agent.aclose()

    assert outcomes == ["agent for session s1 closed while waiting"]


async def test_closing_during_maintenance_leaves_the_agent_closed(harness: Harness) -> None:
    agent = harness.agent(FakeModel())

    async def task() -> str:
        await agent.aclose()
        return "closed inside"

    assert await agent.run_maintenance(task) == "closed inside"
    assert agent.phase is AgentPhase.CLOSED


async def test_an_idle_waiter_can_claim_maintenance_before_the_next_queued_turn(
    harness: Harness,
) -> None:
    gate = Gate()
    agent = harness.agent(FakeModel(gate))
    agent.submit("first")
    agent.submit("second")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()
    users_seen: list[int] = []

    async def owner() -> None:
        await agent.when_idle()

        async def task() -> None:
            users_seen.append(types(agent).count("message/user"))

        await agent.run_maintenance(task)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(owner)
            await anyio.lowlevel.checkpoint()
            gate.release.set()

    await until(lambda: types(agent).count("turn/end") == 2)
    assert users_seen == [1]


# -- when_idle ---------------------------------------------------------------


async def test_when_idle_waits_for_a_next_transition_even_when_idle_now(harness: Harness) -> None:
    agent = harness.agent(FakeModel(ModelReply(text="ok")))
    woke: list[int] = []

    async def waiter() -> None:
        await agent.when_idle()
        woke.append(len(agent.session))

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            for _ in range(10):
                await anyio.lowlevel.checkpoint()
            assert woke == []
            agent.submit("hello")

    assert woke == [3]


async def test_when_idle_returns_at_once_when_closed(harness: Harness) -> None:
    agent = harness.agent(FakeModel())
    await agent.aclose()

    with anyio.CancelScope() as scope:
        scope.cancel()
        await agent.when_idle()

    assert not scope.cancelled_caught


async def test_when_idle_wakes_at_the_next_transition_to_idle(harness: Harness) -> None:
    gate = Gate()
    agent = harness.agent(FakeModel(gate))
    woke: list[AgentPhase] = []

    async def waiter() -> None:
        await agent.when_idle()
        woke.append(agent.phase)

    agent.submit("hello")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            for _ in range(10):
                await anyio.lowlevel.checkpoint()
            assert woke == []
            gate.release.set()

    assert woke == [AgentPhase.IDLE]


async def test_when_idle_waits_for_queued_input_to_be_handled(harness: Harness) -> None:
    agent = harness.agent(FakeModel())

    agent.submit("hello")
    with anyio.fail_after(WAIT):
        await agent.when_idle()

    assert types(agent)[-1] == "turn/end"


async def test_when_idle_wakes_after_maintenance(harness: Harness) -> None:
    agent = harness.agent(FakeModel())
    release = anyio.Event()
    woke: list[str] = []

    async def task() -> None:
        await release.wait()

    async def waiter() -> None:
        await agent.when_idle()
        woke.append("woke")

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run_maintenance, task)
            await until(lambda: agent.phase is AgentPhase.MAINTENANCE)
            group.start_soon(waiter)
            for _ in range(10):
                await anyio.lowlevel.checkpoint()
            assert woke == []
            release.set()

    assert woke == ["woke"]


async def test_when_idle_returns_when_the_agent_closes(harness: Harness) -> None:
    gate = Gate()
    agent = harness.agent(FakeModel(gate))
    woke: list[bool] = []

    async def waiter() -> None:
        await agent.when_idle()
        woke.append(agent.closed)

    agent.submit("hello")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            await anyio.lowlevel.checkpoint()
            await agent.aclose()

    assert woke == [True]


# -- concurrency and closing -------------------------------------------------


async def test_a_slow_tool_in_one_agent_does_not_block_another_agent(harness: Harness) -> None:
    blocking = BlockingTool()
    slow = harness.agent(FakeModel(ModelReply(tool_calls=(call("block"),))), "agent-a")
    slow.tools.register(blocking)
    fast = harness.agent(FakeModel(ModelReply(text="B answered")), "agent-b")

    slow.submit("wait for me")
    with anyio.fail_after(WAIT):
        await blocking.entered.wait()
    await turn(fast, "quick question")

    assert types(fast) == ["message/user", "message/assistant", "turn/end"]
    assert slow.phase is AgentPhase.TURN
    assert "turn/end" not in types(slow)

    blocking.release.set()
    with anyio.fail_after(WAIT):
        await slow.when_idle()
    assert data(slow, "turn/end") == [{"status": "ok"}]


async def test_closing_mid_turn_cancels_and_awaits_the_work_and_records_cancelled(
    harness: Harness,
) -> None:
    blocking = BlockingTool()
    agent = harness.agent(FakeModel(ModelReply(tool_calls=(call("block"),))))
    agent.tools.register(blocking)
    disposed: list[str] = []
    agent.scope.add(lambda: disposed.append("installation"))
    agent.submit("hello")
    agent.submit("parked and dropped")
    with anyio.fail_after(WAIT):
        await blocking.entered.wait()

    await agent.aclose()

    assert blocking.finished == ["finally"]  # awaited, not just cancelled
    assert types(agent) == ["message/user", "message/assistant", "turn/end"]
    assert data(agent, "turn/end") == [
        {
            "status": "error",
            "error": {"code": "cancelled", "message": "the agent closed during this turn"},
        }
    ]
    assert agent.phase is AgentPhase.CLOSED
    assert agent.pending == 0
    assert agent.scope.closed
    assert disposed == ["installation"]
    assert agent.tasks.closed


async def test_closing_twice_is_harmless(harness: Harness) -> None:
    agent = harness.agent(FakeModel())
    disposed: list[str] = []
    agent.scope.add(lambda: disposed.append("x"))

    await agent.aclose()
    await agent.aclose()

    assert disposed == ["x"]


async def test_a_turn_cut_short_after_its_session_closed_appends_nothing_more(
    harness: Harness,
) -> None:
    gate = Gate()
    agent = harness.agent(FakeModel(gate))
    agent.submit("hello")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()

    harness.live.close(agent.session)
    await agent.aclose()

    assert types(agent) == ["message/user"]


# -- streaming ---------------------------------------------------------------


async def test_delta_listeners_receive_streamed_text_until_removed(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    async def stream(request: ModelRequest, on_delta: DeltaSink | None) -> ModelReply:
        assert on_delta is not None
        for fragment in ("Hel", "lo"):
            on_delta(fragment)
        return ModelReply(text="Hello")

    agent = harness.agent(FakeModel(stream, stream))
    received: list[str] = []

    def broken(text: str) -> None:
        raise RuntimeError("listener bug")

    agent.add_delta_listener(broken)
    remove = agent.add_delta_listener(received.append)

    with caplog.at_level(logging.ERROR, logger="dsh.agents.agent"):
        await turn(agent, "hi")
    assert received == ["Hel", "lo"]
    assert "delta listener" in caplog.text
    assert data(agent, "message/assistant") == [{"text": "Hello", "toolCalls": []}]

    remove()
    remove()  # removing twice is harmless
    await turn(agent, "again")
    assert received == ["Hel", "lo"]


async def test_reasoning_streams_on_its_own_channel_and_is_stored_beside_the_answer(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    async def think(request: ModelRequest, on_delta: DeltaSink | None) -> ModelReply:
        thoughts = reasoning_channel(on_delta)
        assert on_delta is not None and thoughts is not None
        thoughts("Let me ")
        thoughts("think.")
        on_delta("Answer.")
        return ModelReply(text="Answer.", reasoning="Let me think.")

    agent = harness.agent(FakeModel(think, ModelReply(text="no thoughts", reasoning="")))
    answers: list[str] = []
    thoughts: list[str] = []
    agent.add_delta_listener(answers.append)
    agent.add_delta_listener(thoughts.append, channel="reasoning")

    def broken(text: str) -> None:
        raise RuntimeError("listener bug")

    agent.add_delta_listener(broken, channel="reasoning")

    with caplog.at_level(logging.ERROR, logger="dsh.agents.agent"):
        await turn(agent, "hi")
        await turn(agent, "again")

    assert (answers, thoughts) == (["Answer."], ["Let me ", "think."])
    assert "reasoning delta listener" in caplog.text
    assert data(agent, "message/assistant") == [
        {"text": "Answer.", "toolCalls": [], "reasoning": "Let me think."},
        {"text": "no thoughts", "toolCalls": []},
    ]


async def test_a_tool_that_closes_its_own_agent_ends_the_turn_as_cancelled(
    harness: Harness,
) -> None:
    class Quit(Tool[NoArgs]):
        name = "quit"
        description = "closes the agent"
        arguments = NoArgs

        async def run(self, args: NoArgs, ctx: ToolContext) -> JsonValue:
            await ctx.agent.aclose()  # must not wait for its own task
            return "bye"

    agent = harness.agent(FakeModel(ModelReply(tool_calls=(call("quit"),))))
    agent.tools.register(Quit())

    agent.submit("quit please")
    await until(lambda: "turn/end" in types(agent))

    assert types(agent) == ["message/user", "message/assistant", "tool/result", "turn/end"]
    assert data(agent, "tool/result")[0]["value"] == "bye"
    assert data(agent, "turn/end")[0]["error"]["code"] == "cancelled"
    assert agent.closed
    await until(lambda: len(agent.tasks) == 0)


async def test_a_turn_that_completes_after_its_agent_closed_leaves_it_closed(
    harness: Harness,
) -> None:
    holder: list[Agent] = []

    async def close_then_answer(request: ModelRequest, on_delta: DeltaSink | None) -> ModelReply:
        await holder[0].aclose()
        return ModelReply(text="last words")

    agent = harness.agent(FakeModel(close_then_answer))
    holder.append(agent)

    agent.submit("hello")
    await until(lambda: "turn/end" in types(agent))

    assert data(agent, "message/assistant") == [{"text": "last words", "toolCalls": []}]
    assert data(agent, "turn/end") == [{"status": "ok"}]
    assert agent.phase is AgentPhase.CLOSED
    await until(lambda: len(agent.tasks) == 0)


# -- hostile replies (issue 19): bounded, and one bad call costs only itself ---------


@pytest.mark.parametrize(
    "arguments",
    [
        '{"x": NaN}',
        '{"x": [Infinity]}',
        '{"x": -Infinity}',
        '{"x": 1e400}',
        {"x": float("nan")},
        {"x": [float("inf")]},
    ],
)
async def test_a_non_finite_number_in_one_call_is_that_call_s_invalid_arguments_only(
    harness: Harness, arguments: Any
) -> None:
    model = FakeModel(
        ModelReply(
            text="two notes",
            tool_calls=(call("note", "bad", arguments=arguments), call("note", "good")),
        ),
        ModelReply(text="noted"),
    )
    agent = harness.agent(model)
    agent.tools.register(NoteTool())

    await turn(agent, "take notes")

    first, second = data(agent, "message/assistant")
    assert first["text"] == "two notes"
    bad, good = first["toolCalls"]
    assert isinstance(bad["arguments"], str)  # what the model said, kept as text
    assert good["arguments"] == {}
    bad_result, good_result = data(agent, "tool/result")
    assert bad_result["error"]["code"] == "invalid_arguments"
    assert "not" in bad_result["error"]["message"]
    assert good_result == {"callId": "good", "name": "note", "value": {"note": 1}}
    assert second["text"] == "noted"
    assert data(agent, "turn/end") == [{"status": "ok"}]


def nested_text(depth: int) -> str:
    return '{"x": ' + "[" * depth + "1" + "]" * depth + "}"


@pytest.mark.parametrize("depth", [MAX_DEPTH, 250])
async def test_arguments_nested_past_the_limit_are_kept_as_text_and_refused(
    harness: Harness, depth: int
) -> None:
    model = FakeModel(ModelReply(tool_calls=(call("note", "deep", arguments=nested_text(depth)),)))
    agent = harness.agent(model)
    agent.tools.register(NoteTool())

    await turn(agent, "go")

    [assistant, _] = data(agent, "message/assistant")
    assert assistant["toolCalls"][0]["arguments"] == nested_text(depth)
    [result] = data(agent, "tool/result")
    assert result["error"]["code"] == "invalid_arguments"
    assert f"nested more than {MAX_DEPTH} levels deep" in result["error"]["message"]
    # What was stored reads back: the Session's log is not bricked.
    for event in agent.session.events:
        assert SessionEvent.from_json(event.to_json()) == event


async def test_arguments_at_the_depth_limit_are_stored_as_an_object(harness: Harness) -> None:
    model = FakeModel(
        ModelReply(tool_calls=(call("note", "deep", arguments=nested_text(MAX_DEPTH - 1)),))
    )
    agent = harness.agent(model)

    await turn(agent, "go")

    [assistant, _] = data(agent, "message/assistant")
    assert isinstance(assistant["toolCalls"][0]["arguments"], dict)


async def test_arguments_longer_than_the_limit_keep_a_prefix_and_are_refused(
    harness: Harness,
) -> None:
    huge = '{"text": "' + "x" * MAX_ARGUMENTS_BYTES + '"}'
    agent = harness.agent(FakeModel(ModelReply(tool_calls=(call("note", "big", arguments=huge),))))
    agent.tools.register(NoteTool())

    await turn(agent, "go")

    [assistant, _] = data(agent, "message/assistant")
    kept = assistant["toolCalls"][0]["arguments"]
    assert kept.startswith('{"text": "xxx') and kept.endswith("…") and len(kept) < 2_000
    [result] = data(agent, "tool/result")
    assert result["error"]["code"] == "invalid_arguments"
    assert f"limit of {MAX_ARGUMENTS_BYTES:,} bytes" in result["error"]["message"]


async def test_calls_past_the_per_reply_limit_are_answered_without_running(
    harness: Harness,
) -> None:
    total = MAX_TOOL_CALLS + 5
    calls = tuple(call("note", f"c{n}") for n in range(total))
    agent = harness.agent(FakeModel(ModelReply(tool_calls=calls), ModelReply(text="ok")))
    note = NoteTool()
    agent.tools.register(note)

    await turn(agent, "go")

    assert note.calls == MAX_TOOL_CALLS
    first = data(agent, "message/assistant")[0]
    assert len(first["toolCalls"]) == total  # every call the model made is on record
    assert first["toolCalls"][-1]["arguments"] == ""
    results = data(agent, "tool/result")
    assert [result["callId"] for result in results] == [f"c{n}" for n in range(total)]
    assert all("value" in result for result in results[:MAX_TOOL_CALLS])
    late = results[MAX_TOOL_CALLS]["error"]
    assert late["code"] == "too_many_calls"
    assert f"call {MAX_TOOL_CALLS + 1} of {total} was not run" in late["message"]


@pytest.mark.parametrize("field", ["text", "reasoning"])
async def test_a_reply_longer_than_a_message_may_be_ends_the_turn_with_a_clear_error(
    harness: Harness, field: str
) -> None:
    reply = ModelReply(**{field: "x" * (MAX_TEXT_BYTES + 1)})
    agent = harness.agent(FakeModel(reply))

    await turn(agent, "go")

    assert types(agent) == ["message/user", "turn/end"]
    [end] = data(agent, "turn/end")
    assert end["error"]["code"] == "reply_too_large"
    assert f"the reply's {field}" in end["error"]["message"]


async def test_a_reply_too_large_to_store_as_one_event_ends_the_turn_with_a_clear_error(
    harness: Harness,
) -> None:
    half = "y" * (MAX_TEXT_BYTES - 16)
    calls = tuple(
        call("note", f"c{n}", arguments='{"t": "' + "z" * (MAX_ARGUMENTS_BYTES - 16) + '"}')
        for n in range(MAX_TOOL_CALLS)
    )
    agent = harness.agent(FakeModel(ModelReply(text=half, reasoning=half, tool_calls=calls)))

    await turn(agent, "go")

    assert types(agent) == ["message/user", "turn/end"]
    [end] = data(agent, "turn/end")
    assert end["error"]["code"] == "reply_too_large"
    assert "more than the limit" in end["error"]["message"]


# -- stopping a turn ---------------------------------------------------------


async def test_cancel_turn_stops_the_model_call_and_ends_the_turn_cancelled(
    harness: Harness,
) -> None:
    gate = Gate()
    agent = harness.agent(FakeModel(gate))
    agent.submit("think slowly")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()

    with anyio.fail_after(WAIT):
        assert await agent.cancel_turn() is True

    assert types(agent) == ["message/user", "turn/end"]
    assert data(agent, "turn/end") == [
        {
            "status": "error",
            "error": {"code": "cancelled", "message": "the turn was stopped before it finished"},
        }
    ]
    assert agent.phase is AgentPhase.IDLE
    assert not gate.release.is_set()


async def test_cancel_turn_awaits_a_running_tool_and_leaves_its_call_without_a_result(
    harness: Harness,
) -> None:
    blocking = BlockingTool()
    agent = harness.agent(FakeModel(ModelReply(text="on it", tool_calls=(call("block"),))))
    agent.tools.register(blocking)
    agent.submit("block")
    with anyio.fail_after(WAIT):
        await blocking.entered.wait()

    assert await agent.cancel_turn() is True

    assert blocking.finished == ["finally"]
    assert types(agent) == ["message/user", "message/assistant", "turn/end"]
    assert data(agent, "turn/end")[0]["error"]["code"] == "cancelled"


async def test_cancel_turn_keeps_queued_input_which_runs_next(harness: Harness) -> None:
    gate = Gate()
    agent = harness.agent(FakeModel(gate, ModelReply(text="second answer")))
    agent.submit("first")
    agent.submit("second")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()

    assert await agent.cancel_turn() is True
    await until(lambda: data(agent, "turn/end")[-1:] == [{"status": "ok"}])

    assert [item["text"] for item in data(agent, "message/user")] == ["first", "second"]
    assert data(agent, "message/assistant") == [{"text": "second answer", "toolCalls": []}]
    assert [end["status"] for end in data(agent, "turn/end")] == ["error", "ok"]


async def test_cancel_turn_without_a_running_turn_changes_nothing(harness: Harness) -> None:
    agent = harness.agent(FakeModel())
    assert await agent.cancel_turn() is False

    await turn(agent, "hello")
    assert await agent.cancel_turn() is False
    assert data(agent, "turn/end") == [{"status": "ok"}]

    await agent.aclose()
    assert await agent.cancel_turn() is False


async def test_cancel_turn_never_cancels_maintenance(harness: Harness) -> None:
    agent = harness.agent(FakeModel())
    release = anyio.Event()
    entered = anyio.Event()
    results: list[str] = []

    async def task() -> str:
        entered.set()
        await release.wait()
        return "maintained"

    async def maintain() -> None:
        results.append(await agent.run_maintenance(task))

    harness.group.start_soon(maintain)
    with anyio.fail_after(WAIT):
        await entered.wait()

    assert await agent.cancel_turn() is False
    release.set()
    await until(lambda: results == ["maintained"])
    assert types(agent) == []


async def test_closing_the_agent_while_a_stop_waits_still_ends_the_turn_once(
    harness: Harness,
) -> None:
    gate = Gate()
    agent = harness.agent(FakeModel(gate))
    agent.submit("hello")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()

    async with anyio.create_task_group() as group:
        group.start_soon(agent.cancel_turn)
        await anyio.lowlevel.checkpoint()
        await agent.aclose()

    assert types(agent) == ["message/user", "turn/end"]
    assert data(agent, "turn/end")[0]["error"]["code"] == "cancelled"


# -- background turns ----------------------------------------------------------


async def test_a_follow_up_waits_for_the_host_s_urgent_work_queued_and_idle(
    harness: Harness,
) -> None:
    background = Background(patience=3600)
    agent = harness.agent(FakeModel(), background=background)
    with background.urgent():  # e.g. another Session's dispatch being stored
        agent.followup("reminder", {"kind": "schedule"})
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        assert types(agent) == []
        assert (agent.phase, agent.pending) == (AgentPhase.IDLE, 1)
        # A due reminder of this agent may still go first: it is idle.
        assert await agent.run_maintenance(_returns("claimed")) == "claimed"
        # A person's message is not background work, but it queues behind the follow-up.
        agent.submit("typed")
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        assert types(agent) == []
    await until(lambda: types(agent).count("turn/end") == 2)
    assert [item["text"] for item in data(agent, "message/user")] == ["reminder", "typed"]


def _holding_back(harness: Harness, patience: float) -> tuple[Background, Agent]:
    """An agent whose host's `Background` is started: it holds follow-ups' drivers back."""
    background = Background(patience=patience)
    background.start(harness.group)
    return background, harness.agent(FakeModel(), background=background)


async def test_a_follow_up_s_driver_is_not_even_started_while_the_host_s_urgent_work_runs(
    harness: Harness,
) -> None:
    background, agent = _holding_back(harness, patience=3600)
    with background.urgent():
        agent.followup("reminder", {"kind": "schedule"})
        agent.submit("typed")  # queued behind it, as with a driver waiting
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        assert (len(agent.tasks), background.held_back) == (0, 1)
        assert (agent.phase, agent.pending) == (AgentPhase.IDLE, 2)
        # Still idle: a due reminder's maintenance takes the agent first, and its end
        # starts no driver either.
        assert await agent.run_maintenance(_returns("claimed")) == "claimed"
        assert (len(agent.tasks), background.held_back) == (0, 1)
    await until(lambda: types(agent).count("turn/end") == 2)
    assert [item["text"] for item in data(agent, "message/user")] == ["reminder", "typed"]


async def test_a_held_back_follow_up_runs_after_the_patience_though_urgent_work_goes_on(
    harness: Harness,
) -> None:
    background, agent = _holding_back(harness, patience=0.05)
    with background.urgent():
        agent.followup("reminder", {"kind": "schedule"})
        assert background.held_back == 1
        # Its wait was the patience: the turn does not wait for a second one.
        await until(lambda: types(agent).count("turn/end") == 1)


async def test_an_agent_closed_while_its_follow_up_is_held_back_starts_nothing(
    harness: Harness,
) -> None:
    background, agent = _holding_back(harness, patience=3600)
    with background.urgent():
        agent.followup("reminder", {"kind": "schedule"})
        await agent.aclose()
    await until(lambda: background.held_back == 0)
    for _ in range(20):
        await anyio.lowlevel.checkpoint()
    assert types(agent) == [] and len(agent.tasks) == 0


async def test_a_person_s_message_does_not_wait_for_urgent_work(harness: Harness) -> None:
    background = Background(patience=3600)
    agent = harness.agent(FakeModel(), background=background)
    with background.urgent():
        await turn(agent, "hello")
    assert types(agent) == ["message/user", "message/assistant", "turn/end"]


async def test_follow_ups_of_successive_deliveries_keep_their_order_while_they_wait(
    harness: Harness,
) -> None:
    background = Background(patience=3600)
    agent = harness.agent(FakeModel(), background=background)
    agent.submit("typed before")
    with background.urgent():

        async def deliver(text: str) -> None:
            agent.followup(text, {"kind": "schedule"})

        # The first turn ("typed before") runs: a person's message.
        await until(lambda: types(agent).count("turn/end") == 1)
        agent.submit("typed after")
        await agent.run_maintenance(lambda: deliver("first"))
        await agent.run_maintenance(lambda: deliver("second"))
        assert agent.pending == 3
    await until(lambda: types(agent).count("turn/end") == 4)
    assert [item["text"] for item in data(agent, "message/user")] == [
        "typed before",
        "first",
        "second",
        "typed after",
    ]


async def test_at_most_the_host_s_background_turns_run_at_once_and_each_still_runs(
    harness: Harness,
) -> None:
    background = Background(turns=2, patience=3600)
    gates = [Gate() for _ in range(4)]
    agents = [
        harness.agent(FakeModel(gate), session_id=f"s{index}", background=background)
        for index, gate in enumerate(gates)
    ]
    for agent in agents:
        agent.followup("reminder", {"kind": "schedule"})
    await until(lambda: gates[0].entered.is_set() and gates[1].entered.is_set())
    for _ in range(20):
        await anyio.lowlevel.checkpoint()
    assert [gate.entered.is_set() for gate in gates] == [True, True, False, False]
    assert [agent.pending for agent in agents] == [0, 0, 1, 1]
    for gate in gates:
        gate.release.set()
    await until(lambda: all(types(agent).count("turn/end") == 1 for agent in agents))
    assert background.turns_running == 0


async def test_a_follow_up_whose_agent_was_claimed_while_it_waited_runs_after_the_claim(
    harness: Harness,
) -> None:
    background = Background(turns=1, patience=3600)
    gate = Gate()
    busy = harness.agent(FakeModel(gate), session_id="busy", background=background)
    agent = harness.agent(FakeModel(), background=background)
    busy.followup("holds the only slot", {"kind": "schedule"})
    await until(lambda: gate.entered.is_set())
    agent.followup("reminder", {"kind": "schedule"})
    for _ in range(20):
        await anyio.lowlevel.checkpoint()
    claimed = anyio.Event()
    finish = anyio.Event()

    async def maintenance() -> None:
        claimed.set()
        await finish.wait()

    async with anyio.create_task_group() as group:
        group.start_soon(agent.run_maintenance, maintenance)
        await until(lambda: claimed.is_set())
        gate.release.set()  # the slot frees while the agent is in maintenance
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        assert types(agent) == [] and agent.pending == 1
        finish.set()
    await until(lambda: types(agent).count("turn/end") == 1)


def _returns(value: str) -> Callable[[], Awaitable[str]]:
    async def task() -> str:
        return value

    return task
