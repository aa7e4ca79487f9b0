from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from dsh.agents.agent import Agent
from dsh.session.log import Session
from dsh.testing import FakeClock
from dsh_tool_schedule import ScheduleConfig
from dsh_tool_schedule.budget import DAY_MS, HOUR_MS, MINUTE_MS, HostPacer, SessionBudget
from dsh_tool_schedule.notice import NOTICE_TYPE

from .conftest import START_MS, FakeModel, Harness, data, dispatches, reminder_messages, settle
from .logs import followup, session, user

pytestmark = pytest.mark.anyio


# -- the Session's budget ---------------------------------------------------------------------


def test_a_session_budget_blocks_when_its_hour_is_full_and_frees_as_it_rolls() -> None:
    budget = SessionBudget(per_hour=2, per_day=10)
    assert budget.blocked_until(START_MS) is None
    budget.record(START_MS)
    budget.record(START_MS + MINUTE_MS)
    assert budget.blocked_until(START_MS + 2 * MINUTE_MS) == START_MS + HOUR_MS
    assert budget.limit_hit(START_MS + 2 * MINUTE_MS) == ("hour", 2)
    assert budget.blocked_until(START_MS + HOUR_MS) is None
    assert budget.used == 2


def test_a_full_day_blocks_until_its_oldest_turn_is_a_day_old() -> None:
    budget = SessionBudget(per_hour=100, per_day=3)
    for hour in range(4):
        budget.record(START_MS + hour * HOUR_MS)
    assert budget.used == 3  # only the last day's worth is kept
    now = START_MS + 5 * HOUR_MS
    assert budget.blocked_until(now) == START_MS + HOUR_MS + DAY_MS
    assert budget.limit_hit(now) == ("day", 3)


def test_both_windows_full_wait_for_the_later() -> None:
    budget = SessionBudget(per_hour=1, per_day=1)
    budget.record(START_MS)
    assert budget.blocked_until(START_MS + 1) == START_MS + DAY_MS


def test_the_budget_is_read_from_the_stored_followups_of_the_last_day() -> None:
    old = session(followup(0), time=START_MS - DAY_MS)
    log = Session(
        old.header,
        [
            *old.events,
            *session(user(), followup(1), followup(2, 3), user(kind="other"), time=START_MS).events[
                1:
            ],
        ],
    )
    budget = SessionBudget.of_log(log, per_hour=5, per_day=10, now_ms=START_MS + MINUTE_MS)
    assert budget.used == 2  # the coalesced follow-up is one turn; the day-old one is not read
    small = SessionBudget.of_log(log, per_hour=5, per_day=1, now_ms=START_MS + MINUTE_MS)
    assert small.used == 1


# -- the host's pacer -------------------------------------------------------------------------


class FakeAlarm:
    def __init__(self) -> None:
        self.targets: dict[object, tuple[int, Any]] = {}

    def set(self, key: object, target_ms: int, wake: Any) -> None:
        self.targets[key] = (target_ms, wake)

    def clear(self, key: object) -> None:
        self.targets.pop(key, None)

    def ring(self, key: object) -> None:
        _target, wake = self.targets.pop(key)
        wake()


def test_the_pacer_grants_per_minute_then_wakes_waiters_first_come_first_served() -> None:
    alarm = FakeAlarm()
    pacer = HostPacer(2, alarm)  # type: ignore[arg-type]
    woken: list[str] = []
    assert pacer.admit("a", START_MS, lambda: woken.append("a"))
    assert pacer.admit("a", START_MS + 1, lambda: woken.append("a"))
    assert not pacer.admit("a", START_MS + 2, lambda: woken.append("a"))
    assert not pacer.admit("b", START_MS + 3, lambda: woken.append("b"))
    assert pacer.waiting == 2
    assert alarm.targets[pacer][0] == START_MS + MINUTE_MS
    # "b" comes back before its turn: still queued behind "a".
    assert not pacer.admit("b", START_MS + MINUTE_MS, lambda: woken.append("b"))
    alarm.ring(pacer)
    assert woken == ["a"]
    assert pacer.admit("a", START_MS + MINUTE_MS, lambda: woken.append("a"))
    # The first slot freed at +1 min, the second frees at +1 min + 1 ms: "b" is next.
    assert alarm.targets[pacer][0] == START_MS + MINUTE_MS + 1
    alarm.ring(pacer)
    assert woken == ["a", "b"]
    assert pacer.admit("b", START_MS + MINUTE_MS + 1, lambda: woken.append("b"))
    assert pacer.waiting == 0
    assert pacer not in alarm.targets


def test_a_slot_given_back_goes_to_the_next_in_line_at_once() -> None:
    alarm = FakeAlarm()
    pacer = HostPacer(1, alarm)  # type: ignore[arg-type]
    woken: list[str] = []
    assert pacer.admit("a", START_MS, lambda: woken.append("a"))
    assert not pacer.admit("b", START_MS, lambda: woken.append("b"))
    pacer.give_back(START_MS + 5)
    assert woken == ["b"]
    assert pacer.admit("b", START_MS + 5, lambda: woken.append("b"))
    pacer.give_back(START_MS + 6)
    pacer.give_back(START_MS + 7)  # nothing left to give back
    assert pacer.admit("c", START_MS + 8, lambda: None)


def test_a_waiter_that_stops_is_forgotten_and_the_next_is_armed() -> None:
    alarm = FakeAlarm()
    pacer = HostPacer(1, alarm)  # type: ignore[arg-type]
    woken: list[str] = []
    assert pacer.admit("a", START_MS, lambda: woken.append("a"))
    assert not pacer.admit("b", START_MS, lambda: woken.append("b"))
    assert not pacer.admit("c", START_MS, lambda: woken.append("c"))
    pacer.forget("b")
    pacer.forget("nobody")
    alarm.ring(pacer)
    assert woken == ["c"]
    pacer.forget("c")
    assert pacer not in alarm.targets
    pacer._ring()  # a ring with nobody waiting wakes nobody
    assert woken == ["c"]


# -- the owner within its budgets -------------------------------------------------------------


async def run_for(harness: Harness, seconds: int, step: int = 1) -> None:
    for _ in range(seconds // step):
        await settle()
        harness.clock.advance(step)
    await settle()


def notices(agent: Agent) -> list[dict[str, Any]]:
    return [data(event) for event in agent.session.events if event.type == NOTICE_TYPE]


def occurrences(agent: Agent) -> list[tuple[str, int]]:
    return [(data(e)["occurrenceAt"], data(e)["missed"]) for e in dispatches(agent.session)]


@pytest.fixture
async def small() -> Any:
    config = ScheduleConfig(max_deliveries_per_hour=2, max_deliveries_per_day=5)
    async with anyio.create_task_group() as group:
        host = Harness(group, FakeClock(START_MS), config)
        try:
            yield host
        finally:
            await host.aclose()
            group.cancel_scope.cancel()


async def test_reminders_due_in_one_second_are_one_turn(harness: Harness) -> None:
    model = FakeModel()
    agent = harness.open(model=model)
    for prompt in ("water", "stretch", "walk"):
        await harness.value(agent, "schedule_create", prompt=prompt, cron="* * * * *")
    await run_for(harness, 60, step=10)
    assert [data(e)["id"] for e in dispatches(agent.session)] == ["rem-1", "rem-2", "rem-3"]
    [message] = reminder_messages(agent.session)
    source = data(message)["source"]
    seqs = [event.seq for event in dispatches(agent.session)]
    assert (source["dispatchSeq"], source["dispatchSeqs"]) == (seqs[0], seqs)
    assert source["scheduleIds"] == ["rem-1", "rem-2", "rem-3"]
    assert data(message)["text"].count("[Scheduled reminder]") == 3
    assert len(model.requests) == 1


async def test_a_spent_hour_defers_deliveries_tells_once_and_never_fires_early(
    small: Harness,
) -> None:
    agent = small.open()
    await small.value(agent, "schedule_create", prompt="ping", cron="* * * * *")
    await run_for(small, 5 * 60, step=10)
    assert occurrences(agent) == [
        ("2026-01-01T00:01:00.000Z", 0),
        ("2026-01-01T00:02:00.000Z", 0),
    ]
    [notice] = notices(agent)
    assert notice["notice"] == "deliveries_deferred"
    assert (notice["limit"], notice["max"], notice["until"]) == (
        "hour",
        2,
        "2026-01-01T01:01:00.000Z",
    )
    listing = await small.value(agent, "schedule_list")
    assert listing["reminders"][0]["state"] == "overdue"  # still active, deferred
    await run_for(small, 55 * 60, step=60)  # up to 01:00:00, before the hour has room
    assert len(dispatches(agent.session)) == 2
    await run_for(small, 60, step=1)
    assert occurrences(agent)[2] == ("2026-01-01T01:01:00.000Z", 58)
    assert len(notices(agent)) == 1
    await run_for(small, 120, step=1)  # 01:02 has room again; at 01:03 the hour is full
    assert [at for at, _missed in occurrences(agent)][3:] == ["2026-01-01T01:02:00.000Z"]
    assert len(notices(agent)) == 2  # a new stop, told again


async def test_a_deferred_one_shot_fires_once_late() -> None:
    config = ScheduleConfig(max_deliveries_per_hour=1)
    async with anyio.create_task_group() as group:
        host = Harness(group, FakeClock(START_MS), config)
        agent = host.open()
        await host.value(agent, "schedule_create", prompt="a", after_seconds=10)
        await host.value(agent, "schedule_create", prompt="b", after_seconds=20)
        await run_for(host, 30)
        assert occurrences(agent) == [("2026-01-01T00:00:10.000Z", 0)]
        await run_for(host, 3600, step=60)
        assert occurrences(agent) == [
            ("2026-01-01T00:00:10.000Z", 0),
            ("2026-01-01T00:00:20.000Z", 0),
        ]
        # Not before the hour had room (the test's 60 s steps make it up to a minute later).
        late = dispatches(agent.session)[1].time - (START_MS + 10_000 + HOUR_MS)
        assert 0 <= late < 60_000
        assert (await host.value(agent, "schedule_list"))["reminders"] == []
        await host.aclose()
        group.cancel_scope.cancel()


async def test_a_restart_does_not_refill_the_budget(small: Harness) -> None:
    agent = small.open()
    await small.value(agent, "schedule_create", prompt="ping", cron="* * * * *")
    await run_for(small, 3 * 60, step=10)
    assert len(dispatches(agent.session)) == 2
    await agent.aclose()
    small.live.close(agent.session)
    again = small.open(
        Session.resume(agent.session.header, agent.session.events, resumed_at=small.clock.wall_ms())
    )
    await run_for(small, 10 * 60, step=60)
    assert len(dispatches(again.session)) == 2
    assert len(notices(again)) == 1  # told before the restart: not again


async def test_the_host_ceiling_makes_deliveries_wait_fairly() -> None:
    config = ScheduleConfig(host_deliveries_per_minute=1, min_interval_seconds=1)
    async with anyio.create_task_group() as group:
        host = Harness(group, FakeClock(START_MS), config)
        busy, quiet = host.open(), host.open()
        for prompt, seconds in (("a", 10), ("b", 11), ("d", 13)):
            await host.value(busy, "schedule_create", prompt=prompt, after_seconds=seconds)
        await host.value(quiet, "schedule_create", prompt="c", after_seconds=12)

        def counts() -> list[int]:
            return [len(dispatches(agent.session)) for agent in (busy, quiet)]

        await run_for(host, 15)
        assert counts() == [1, 0]
        await run_for(host, 60)
        assert counts() == [2, 0]  # "b" asked first
        await run_for(host, 60)
        # "quiet" asked before "busy" asked for "d": it gets the next minute's turn.
        assert counts() == [2, 1]
        assert dispatches(quiet.session)[0].time == START_MS + 130_000
        await run_for(host, 60)
        assert counts() == [3, 1]
        await host.aclose()
        group.cancel_scope.cancel()


async def test_a_requeued_coalesced_delivery_is_one_followup_again(harness: Harness) -> None:
    agent = harness.open()
    for prompt in ("water", "stretch"):
        await harness.value(agent, "schedule_create", prompt=prompt, cron="* * * * *")
    await run_for(harness, 60, step=10)
    last = dispatches(agent.session)[-1].seq
    await agent.aclose()
    harness.live.close(agent.session)
    crashed = Session(agent.session.header, agent.session.events[: last + 1])
    model = FakeModel()
    again = harness.open(
        Session.resume(crashed.header, crashed.events, resumed_at=harness.clock.wall_ms()),
        model=model,
    )
    await settle()
    [message] = reminder_messages(again.session)
    source = data(message)["source"]
    assert source["dispatchSeqs"] == [last - 1, last]
    assert source["requeued"] is True
    assert len(model.requests) == 1


async def test_a_deferral_notice_whose_barrier_fails_is_logged(
    small: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    agent = small.open()
    await small.value(agent, "schedule_create", prompt="ping", cron="* * * * *")
    await run_for(small, 150, step=10)
    assert len(dispatches(agent.session)) == 2
    small.listener(agent).mode = "raise"
    with caplog.at_level(logging.WARNING):
        await run_for(small, 60, step=10)
    assert len(notices(agent)) == 1
    assert "the notice of deferred reminders was appended but not confirmed" in caplog.text
