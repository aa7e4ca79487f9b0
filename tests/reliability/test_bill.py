"""A model that runs up a bill: each reminder turn answered with 20 `* * * * *` reminders.

The reproduction of issue 35's item: a model that answers every reminder
turn (and the person's first message) with 20 calls of
`schedule_create {"cron": "* * * * *"}`. `max_per_turn` resets every turn, so
it reaches `max_active` (100) in five turns; from then on 100 reminders fall
due every minute. Run over simulated time (`FakeClock`) on the schedule
plugin's in-process harness, three ways:

- **before**: one reminder per turn and no budget (coalescing off, budgets
  lifted) — the behaviour before the delivery budget: 100 turns a minute;
- **coalesced only**: budgets lifted — reminders due in the same second share
  a turn (at most 20 each): 5 turns a minute;
- **after**: the product defaults (60 turns an hour, 480 a day per Session):
  the turns a Session can start are capped, the reminders stay active and
  deferred, and the person is told.

The figures (`bill` section) are turns started by reminders: before and
coalesced, the steady minute (reached in two and five simulated minutes;
every turn runs 20 refused tool calls, which is what makes "before" costly to
simulate longer) times 60 and 1,440; after, the turns of two simulated hours
(`--long`: a whole day, where the day's 480 caps it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from dsh.agents.agent import Agent, AgentPhase
from dsh.models.base import DeltaSink, ModelReply, ModelRequest, ToolCall
from dsh.testing import FakeClock
from dsh_tool_schedule import ScheduleConfig, delivery
from dsh_tool_schedule.notice import NOTICE_TYPE
from tests.schedule.conftest import START_MS, Harness, data, reminder_messages
from tests.support.deadlines import WAIT

from .figures import Figures

pytestmark = [pytest.mark.reliability, pytest.mark.anyio]

LIFTED = ScheduleConfig(
    max_deliveries_per_hour=100_000,
    max_deliveries_per_day=1_000_000,
    host_deliveries_per_minute=1_000_000,
)


class BillModel:
    """Answers every user message (the person's or a reminder's) with 20 cron creates."""

    name = "bill"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        self.calls += 1
        if request.messages[-1].role == "tool":
            return ModelReply(text="done")
        calls = tuple(
            ToolCall(
                id=f"c{n}",
                name="schedule_create",
                arguments={"prompt": "again", "cron": "* * * * *"},
            )
            for n in range(20)
        )
        return ModelReply(text="", tool_calls=calls)


@asynccontextmanager
async def harness(config: ScheduleConfig) -> AsyncIterator[Harness]:
    async with anyio.create_task_group() as group:
        host = Harness(group, FakeClock(START_MS), config)
        try:
            yield host
        finally:
            await host.aclose()
            group.cancel_scope.cancel()


def busy(host: Harness, agent: Agent) -> bool:
    owner = host.plugin._installations[agent]._owner
    return agent.phase is not AgentPhase.IDLE or agent.pending > 0 or owner._task is not None


async def quiet(host: Harness, agent: Agent) -> None:
    """Run the loop until the agent and its owner rest (`settle()` polls every 0.1 s, which
    thousands of turns cannot afford); a deadline bounds a failure, not a speed."""
    calm = 0
    with anyio.fail_after(10 * WAIT):
        while calm < 20:
            await anyio.lowlevel.checkpoint()
            calm = 0 if busy(host, agent) else calm + 1


async def run(config: ScheduleConfig, minutes: int) -> tuple[Counter[int], int, int]:
    """Over `minutes` simulated minutes: reminder turns by minute, model calls, notices."""
    async with harness(config) as host:
        model = BillModel()
        agent = host.open(model=model)
        agent.submit("go")
        for _ in range(minutes):
            await quiet(host, agent)
            host.clock.advance(60)
        await quiet(host, agent)
        told = sum(1 for event in agent.session.events if event.type == NOTICE_TYPE)
        by_minute = Counter((m.time - START_MS) // 60_000 for m in reminder_messages(agent.session))
        assert all(
            data(m)["source"]["kind"] == "schedule" for m in reminder_messages(agent.session)
        )
        return by_minute, model.calls, told


async def test_a_model_that_multiplies_reminders_is_held_to_the_budget(
    figures: Figures, monkeypatch: pytest.MonkeyPatch, scale: int
) -> None:
    figure = figures.section("bill")
    # Before: 20 turns in minute 1 (they create the other 80), 100 a minute from minute 2 on.
    with monkeypatch.context() as patch:
        patch.setattr(delivery, "MAX_COALESCED", 1)
        before, _calls, _told = await run(LIFTED, 2)
    assert (before[1], before[2]) == (20, 100)
    # Coalesced only: 1, 2, 4 turns in minutes 1-3 (20, 40, 80 reminders), 5 a minute after.
    coalesced, _calls, _told = await run(LIFTED, 5)
    assert [coalesced[minute] for minute in range(1, 6)] == [1, 2, 4, 5, 5]
    # After (the defaults): the first hour's 60 turns, then deferral; --long runs a whole day.
    hours = 24 if scale > 1 else 2
    after, calls, told = await run(ScheduleConfig(), hours * 60)
    per_hour = [sum(n for minute, n in after.items() if minute // 60 == h) for h in range(hours)]
    assert max(per_hour) <= ScheduleConfig().max_deliveries_per_hour
    assert sum(per_hour) == min(hours * 60, ScheduleConfig().max_deliveries_per_day)
    assert 1 <= told <= hours
    figure.update(
        {
            "before_turns_per_minute": before[2],
            "before_turns_per_hour": before[2] * 60,
            "before_turns_per_day": before[2] * 60 * 24,
            "coalesced_turns_per_hour": coalesced[5] * 60,
            "coalesced_turns_per_day": coalesced[5] * 60 * 24,
            "after_hours_simulated": hours,
            "after_turns_per_hour_max": max(per_hour),
            "after_turns_simulated": sum(per_hour),
            "after_model_calls_simulated": calls,
            "after_deferral_notices": told,
        }
    )
