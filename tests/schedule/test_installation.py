from __future__ import annotations

from functools import partial
from typing import Any

import anyio
import pytest
from pydantic import JsonValue

from dsh.agents.agent import AgentPhase
from dsh.agents.tools import Tool, ToolArguments, ToolContext
from dsh.models.base import ModelReply
from dsh_tool_schedule import InstallationError
from tests.support.deadlines import WAIT

from .conftest import FakeModel, Harness, changes, data, dispatches, reminder_messages, settle

pytestmark = pytest.mark.anyio


class Squatter(Tool[ToolArguments]):
    """Another plugin's tool that already took one of the schedule names."""

    name = "schedule_list"
    description = "not ours"
    arguments = ToolArguments

    async def run(self, args: ToolArguments, ctx: ToolContext) -> JsonValue:
        return "squatter"


class Gate:
    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.opened = anyio.Event()

    async def __call__(self) -> ModelReply:
        self.entered.set()
        await self.opened.wait()
        return ModelReply(text="done")


async def due_with_owner_waiting(harness: Harness, **open_args: Any) -> Any:
    """An agent whose reminder rem-1 is due at the next 0.25 s step."""
    agent = harness.open(**open_args)
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    await settle()
    harness.clock.advance(9.75)
    await settle()
    assert harness.clock.sleeps[-1] == 0.25
    return agent


async def test_a_taken_tool_name_rolls_back_every_registration(harness: Harness) -> None:
    agent = harness.open(publish=False)
    squatter = Squatter()
    agent.tools.register(squatter)

    with pytest.raises(InstallationError) as caught:
        harness.publish(agent)

    message = str(caught.value)
    assert "'tool-schedule'" in message
    assert f"session {agent.session.id}" in message
    assert "schedule_list" in message
    assert agent.tools.names() == ["schedule_list"]
    assert agent.tools.get("schedule_list") is squatter
    await settle()
    assert harness.clock.sleeping == 0  # no owner runs
    assert len(agent.tasks) == 0
    await harness.plugin_scope.aclose()
    assert agent.tools.get("schedule_list") is squatter


async def test_a_closed_plugin_installs_nothing(harness: Harness) -> None:
    await harness.plugin_scope.aclose()
    agent = harness.open(publish=False)

    with pytest.raises(InstallationError, match="ScopeClosed"):
        harness.publish(agent)

    assert agent.tools.names() == []
    await settle()
    assert len(agent.tasks) == 0
    assert harness.clock.sleeping == 0


async def test_unloading_during_the_owners_preflight_is_quiescent(harness: Harness) -> None:
    agent = await due_with_owner_waiting(harness)
    hold = harness.listener(agent).hold()
    harness.clock.advance(0.25)
    with anyio.fail_after(WAIT):
        await hold.entered.wait()
    before = list(agent.session.events)

    with anyio.fail_after(WAIT):
        await harness.plugin_scope.aclose()

    assert agent.tools.names() == []
    hold.release()
    await settle()
    assert list(agent.session.events) == before
    assert reminder_messages(agent.session) == []
    assert len(agent.tasks) == 0
    assert agent.phase is AgentPhase.IDLE


async def test_unloading_during_an_idle_wait_is_quiescent(harness: Harness) -> None:
    gate = Gate()
    agent = await due_with_owner_waiting(harness, model=FakeModel(gate))
    agent.submit("busy")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()
    harness.clock.advance(0.25)
    await settle()
    assert harness.clock.sleeping == 0  # the owner waits for idle

    with anyio.fail_after(WAIT):
        await harness.plugin_scope.aclose()

    assert agent.phase is AgentPhase.TURN
    assert agent.tools.names() == []
    gate.opened.set()
    await settle()
    assert dispatches(agent.session) == []
    assert reminder_messages(agent.session) == []
    assert [data(event)["change"] for event in agent.session.events[:1]] == ["create"]
    assert len(changes(agent.session)) == 1


async def test_unloading_during_a_sleep_cancels_the_timer(harness: Harness) -> None:
    agent = await due_with_owner_waiting(harness)
    assert harness.clock.sleeping == 1

    await harness.plugin_scope.aclose()

    assert harness.clock.sleeping == 0
    harness.clock.advance(60)
    await settle()
    assert dispatches(agent.session) == []
    assert len(changes(agent.session)) == 1


async def test_unloading_awaits_an_operation_in_flight_and_refuses_one_not_started(
    harness: Harness,
) -> None:
    agent = harness.open()
    hold = harness.listener(agent).hold()
    results: dict[str, Any] = {}

    async def call(key: str, name: str, **arguments: Any) -> None:
        results[key] = await harness.call(agent, name, **arguments)

    async def unload() -> None:
        await harness.plugin_scope.aclose()
        results["unloaded"] = True

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(partial(call, "first", "schedule_create", prompt="a", after_seconds=5))
            await hold.entered.wait()
            group.start_soon(partial(call, "second", "schedule_list"))
            await settle()
            group.start_soon(unload)
            await settle()
            assert "unloaded" not in results  # it waits for the create in flight
            hold.release()

    assert results["first"].value["id"] == "rem-1"
    assert results["second"].error["code"] == "internal_error"
    assert "no longer installed" in results["second"].error["message"]
    assert len(changes(agent.session)) == 1
    assert agent.tools.names() == []


async def test_closing_the_agent_disposes_the_installation_and_keeps_records(
    harness: Harness,
) -> None:
    agent = await due_with_owner_waiting(harness)

    await agent.aclose()

    assert agent.tools.names() == []
    assert harness.clock.sleeping == 0
    assert len(changes(agent.session)) == 1
    await harness.plugin_scope.aclose()
