"""A due reminder is not starved by queued input: the real schedule plugin on a fake clock.

The rule (`dsh.agent`): a reminder that falls due during a turn is delivered
right after that turn, before any message queued behind it, and its message
is the next one the model answers.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from dsh import ModelReply, ModelRequest, SessionLog
from dsh.testing import FakeClock, FakeModel, load_plugin, running_host, settled
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio


async def test_a_reminder_due_during_a_turn_is_delivered_before_the_queued_messages() -> None:
    clock = FakeClock()
    entered, release = anyio.Event(), anyio.Event()

    async def long_answer(request: ModelRequest) -> ModelReply:
        entered.set()
        await release.wait()
        return ModelReply(text="a long answer")

    model = FakeModel(
        [
            FakeModel.tool_call("schedule_create", {"prompt": "stretch", "after_seconds": 10}),
            "set",
            long_answer,
            "reminded",
            "second answer",
            "third answer",
        ]
    )
    async with running_host(model=model, clock=clock) as host:
        await load_plugin(host, "tool-schedule")
        agent = await host.create_session()
        agent.submit("remind me in 10 seconds to stretch")
        await settled(agent)

        agent.submit("a long question")
        with anyio.fail_after(WAIT):
            await entered.wait()
        agent.submit("second")
        agent.submit("third")
        with anyio.fail_after(WAIT):
            while clock.wall_ms() < 1_767_225_610_000:  # the reminder is due 10 s after START
                await anyio.wait_all_tasks_blocked()
                clock.advance(clock.sleeps[-1])
            await anyio.wait_all_tasks_blocked()
        release.set()
        await settled(agent)

    users = of_type(agent.session, "message/user")
    assert [user["source"]["kind"] for user in users] == [
        "user",
        "user",
        "schedule",
        "user",
        "user",
    ]
    assert users[2]["text"].startswith("[Scheduled reminder]")
    assert [user["text"] for user in users[3:]] == ["second", "third"]
    answers = [reply["text"] for reply in of_type(agent.session, "message/assistant")]
    assert answers[-3:] == ["reminded", "second answer", "third answer"]


def of_type(session: SessionLog, type: str) -> list[dict[str, Any]]:
    return [dict(event.data) for event in session.scan(types={type})]  # type: ignore[arg-type]
