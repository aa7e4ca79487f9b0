from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import pytest

from dsh.agents.agent import Agent, AgentPhase
from dsh.models.base import ModelReply
from dsh.session.live import Observation, SessionEventObserved
from dsh.session.log import Session
from dsh.testing import FakeClock
from dsh_tool_schedule import ScheduleConfig
from dsh_tool_schedule import owner as owner_module
from dsh_tool_schedule.plan import with_missed
from dsh_tool_schedule.timefmt import MAX_TIMESTAMP_MS
from tests.support.deadlines import WAIT

from .conftest import (
    START_MS,
    FakeModel,
    Harness,
    Outcome,
    changes,
    data,
    dispatches,
    reminder_messages,
    settle,
    tool_call,
)
from .logs import create, create2, cron, events, every, fork, raw, resume, session

pytestmark = pytest.mark.anyio


async def follow(harness: Harness, until: Callable[[], bool], limit: int = 1000) -> None:
    """Advance fake time by exactly the sleep the owner is in, until `until()` holds."""
    for _ in range(limit):
        await settle()
        if until():
            return
        assert harness.clock.sleeping == 1, "the owner should be sleeping"
        harness.clock.advance(harness.clock.sleeps[-1])
    raise AssertionError("condition not reached")


def frame_of(agent: Agent, index: int = 0) -> str:
    text = data(reminder_messages(agent.session)[index])["text"]
    assert isinstance(text, str)
    return text


def line_of(agent: Agent, label: str, index: int = 0) -> str:
    """The value of the frame line `label: value` of the `index`-th reminder message."""
    for line in frame_of(agent, index).split("\n"):
        if line.startswith(f"{label}: "):
            return line.removeprefix(f"{label}: ")
    raise AssertionError(f"no {label!r} line")


def status_of(agent: Agent, index: int = 0) -> str:
    return "Status: " + line_of(agent, "Status", index)


class Gate:
    """A model step that waits until the test opens it."""

    def __init__(self, reply: ModelReply | None = None) -> None:
        self.entered = anyio.Event()
        self.opened = anyio.Event()
        self.reply = reply or ModelReply(text="done")

    async def __call__(self) -> ModelReply:
        self.entered.set()
        await self.opened.wait()
        return self.reply


async def test_a_reminder_fires_once_on_time_with_its_frame(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)

    await follow(harness, lambda: bool(dispatches(agent.session)))
    await settle()

    assert harness.clock.wall_ms() == START_MS + 10_000
    [dispatch] = dispatches(agent.session)
    assert dispatch.data == {
        "version": 2,
        "change": "dispatch",
        "id": "rem-1",
        "occurrenceAt": "2026-01-01T00:00:10.000Z",
        "missed": 0,
        "recordSeq": 0,
    }
    [message] = reminder_messages(agent.session)
    assert data(message)["source"] == {
        "kind": "schedule",
        "scheduleId": "rem-1",
        "occurrenceAt": "2026-01-01T00:00:10.000Z",
        "missed": 0,
        "dispatchSeq": dispatch.seq,
    }
    assert frame_of(agent) == (
        "[Scheduled reminder]\n"
        "This is a scheduled reminder that was set earlier in this conversation.\n"
        'Reminder id: "rem-1"\n'
        'Prompt: "stretch"\n'
        'Rule: "once, 10 seconds after it was set"\n'
        "Occurrence: 2026-01-01T00:00:10+00:00 (UTC) = 2026-01-01T00:00:10.000Z\n"
        "Delivered at: 2026-01-01T00:00:10.000Z\n"
        "Status: on time\n"
        "Missed: 0\n"
        "Next: none (this was the last occurrence)\n"
        "Delivery: it fires only while this conversation is open."
    )
    assert (await harness.value(agent, "schedule_list"))["reminders"] == []
    harness.clock.advance(3600)
    await settle()
    assert len(dispatches(agent.session)) == 1


async def test_long_waits_sleep_in_segments_of_at_most_60_seconds(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="tea", after_seconds=3 * 3600)

    await follow(harness, lambda: bool(dispatches(agent.session)), limit=400)

    assert max(harness.clock.sleeps) <= 60
    assert len(harness.clock.sleeps) >= 3 * 60
    assert harness.clock.wall_ms() == START_MS + 3 * 3600 * 1000
    assert status_of(agent) == "Status: on time"


async def test_the_last_long_sleep_ends_early_and_a_short_one_lands_on_the_target(
    harness: Harness,
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="tea", after_seconds=100)
    await follow(harness, lambda: bool(dispatches(agent.session)))
    requested = [round(sleep, 3) for sleep in harness.clock.sleeps]
    assert requested[-3:] == [60.0, 39.75, 0.25]


async def test_segments_and_the_early_margin_follow_the_config() -> None:
    async with anyio.create_task_group() as group:
        config = ScheduleConfig(max_segment_seconds=30, early_wake_seconds=0)
        host = Harness(group, FakeClock(START_MS), config)
        agent = host.open()
        await host.value(agent, "schedule_create", prompt="tea", after_seconds=75)
        await follow(host, lambda: bool(dispatches(agent.session)))
        assert [round(sleep, 3) for sleep in host.clock.sleeps][-3:] == [30.0, 30.0, 15.0]
        await host.aclose()
        group.cancel_scope.cancel()


async def test_a_wall_clock_rollback_never_fires_early(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    await settle()
    harness.clock.jump_wall(-3600)

    fired_at: list[int] = []

    def fired() -> bool:
        if dispatches(agent.session) and not fired_at:
            fired_at.append(harness.clock.wall_ms())
        return bool(fired_at)

    await follow(harness, fired, limit=200)

    assert fired_at == [START_MS + 10_000]
    assert max(harness.clock.sleeps) <= 60
    assert status_of(agent) == "Status: on time"


async def test_a_forward_jump_makes_the_target_overdue_and_it_fires_once(
    harness: Harness,
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=3 * 3600)
    await settle()
    harness.clock.jump_wall(4 * 3600)
    assert dispatches(agent.session) == []  # a wall jump wakes no timer

    harness.clock.advance(60)
    await settle()

    assert len(dispatches(agent.session)) == 1
    assert status_of(agent) == "Status: overdue by 1h 01m 00s"
    harness.clock.advance(600)
    await settle()
    assert len(dispatches(agent.session)) == 1


async def test_an_overdue_reminder_fires_once_right_after_a_resume(harness: Harness) -> None:
    stored = session(create("rem-1", 10, prompt="stretch"))
    harness.clock.jump_wall(3600)
    agent = harness.open(resume(stored, at_ms=harness.clock.wall_ms()))
    await settle()

    assert len(dispatches(agent.session)) == 1
    assert status_of(agent) == "Status: overdue by 59m 50s"
    assert "= 2026-01-01T00:00:10.000Z" in line_of(agent, "Occurrence")
    harness.clock.advance(600)
    await settle()
    assert len(dispatches(agent.session)) == 1


async def test_in_a_storm_no_follow_up_turn_starts_before_every_due_dispatch_is_stored(
    harness: Harness,
) -> None:
    first, second = (
        harness.open(
            resume(session(create("rem-1", 10, prompt=name), session_id=name), at_ms=START_MS)
        )
        for name in ("first", "second")
    )
    await settle()
    held = harness.listener(second).hold()  # the second's store is slow
    harness.clock.advance(10)
    await settle()
    assert held.entered.is_set()
    assert len(dispatches(first.session)) == 1 and harness.listener(first).flushes >= 2
    # The first dispatch is durable, yet its turn waits: the second is not stored yet.
    assert reminder_messages(first.session) == [] and first.pending == 1
    assert harness.background.urgent_now == 1
    held.release()
    await settle()
    assert [len(reminder_messages(agent.session)) for agent in (first, second)] == [1, 1]
    assert harness.background.urgent_now == 0


async def test_due_reminders_fire_earliest_first_each_in_its_own_turn(harness: Harness) -> None:
    stored = session(create("rem-1", 20, prompt="second"), create("rem-2", 10, prompt="first"))
    harness.clock.jump_wall(60)
    agent = harness.open(resume(stored, at_ms=harness.clock.wall_ms()))
    await settle()

    assert [data(event)["id"] for event in dispatches(agent.session)] == ["rem-2", "rem-1"]
    assert [line_of(agent, "Prompt", index) for index in (0, 1)] == ['"first"', '"second"']


async def test_a_reminder_due_during_a_turn_fires_once_after_the_turn(harness: Harness) -> None:
    gate = Gate()
    model = FakeModel(tool_call("schedule_create", prompt="stretch", after_seconds=10), gate)
    agent = harness.open(model=model)
    agent.submit("remind me in 10 seconds to stretch")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()
    assert agent.phase is AgentPhase.TURN

    await follow(harness, lambda: harness.clock.wall_ms() >= START_MS + 10_000)
    harness.clock.advance(5)
    await settle()
    assert dispatches(agent.session) == []
    assert harness.clock.sleeping == 0  # waiting for idle, not polling

    gate.opened.set()
    await settle()

    assert len(dispatches(agent.session)) == 1
    assert len(reminder_messages(agent.session)) == 1
    assert status_of(agent) == "Status: overdue by 5s"
    assert agent.phase is AgentPhase.IDLE


async def test_the_dispatch_is_appended_in_maintenance_before_the_reminder_message(
    harness: Harness,
) -> None:
    agent = harness.open()
    seen: list[tuple[str, Any, AgentPhase]] = []

    def observe(observation: Observation) -> None:
        if isinstance(observation, SessionEventObserved) and observation.session is agent.session:
            event = observation.event
            change = event.data.get("change") if isinstance(event.data, dict) else None
            seen.append((event.type, change, agent.phase))

    harness.live.observe(observe)
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    await follow(harness, lambda: bool(reminder_messages(agent.session)))
    await settle()

    after_create = seen[1:]
    assert after_create[0] == ("schedule/change", "dispatch", AgentPhase.MAINTENANCE)
    assert after_create[1] == ("message/user", None, AgentPhase.TURN)
    assert [item[0] for item in after_create[2:]] == ["message/assistant", "turn/end"]


async def test_the_followup_turn_shows_the_frame_to_the_model(harness: Harness) -> None:
    model = FakeModel()
    agent = harness.open(model=model)
    await harness.value(agent, "schedule_create", prompt='say "hi" </script>', after_seconds=1)
    await follow(harness, lambda: bool(model.requests))
    await settle()
    [request] = model.requests
    last = request.messages[-1]
    assert last.role == "user"
    assert last.source is not None
    assert (last.source["kind"], last.source["scheduleId"]) == ("schedule", "rem-1")
    assert 'Prompt: "say \\"hi\\" </script>"' in last.text


async def test_an_enqueue_failure_appends_nothing_and_retries_at_the_next_idle(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    agent = harness.open()
    real_followup = agent.followup
    attempts: list[str] = []

    def failing_followup(text: str, source: dict[str, Any]) -> None:
        attempts.append(text)
        if len(attempts) == 1:
            raise RuntimeError("inbox full")
        real_followup(text, source)

    monkeypatch.setattr(agent, "followup", failing_followup)
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    await follow(harness, lambda: bool(attempts))
    await settle()

    assert dispatches(agent.session) == []
    assert "could not be queued" in caplog.text
    assert harness.clock.sleeping == 0  # no private retry timer
    harness.clock.advance(120)
    await settle()
    assert len(attempts) == 1
    listing = await harness.value(agent, "schedule_list")
    assert [item["state"] for item in listing["reminders"]] == ["overdue"]
    await settle()

    agent.submit("hello")  # a turn ends: the agent becomes idle again
    await settle()

    assert len(attempts) >= 2
    assert len(dispatches(agent.session)) == 1
    assert len(reminder_messages(agent.session)) == 1


async def test_a_framing_failure_appends_nothing_and_leaves_the_record_active(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    agent = harness.open()
    latest = (MAX_TIMESTAMP_MS - START_MS) // 1000
    await harness.value(agent, "schedule_create", prompt="far", after_seconds=latest)
    await settle()
    harness.clock.jump_wall(latest + 1)  # past 9999-12-31: the delivery time has no spelling
    harness.clock.advance(60)
    await settle()

    assert dispatches(agent.session) == []
    assert reminder_messages(agent.session) == []
    assert "could not be queued" in caplog.text
    assert len(changes(agent.session)) == 1


async def test_an_append_failure_after_enqueue_faults_the_owner_without_retrying(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    real_append = harness.live.append
    refused: list[Any] = []

    def append(session: Any, type: str, data: Any) -> Any:
        if type == "schedule/change" and data.get("change") == "dispatch":
            refused.append(data)
            raise OSError("log is read-only")
        return real_append(session, type, data)

    monkeypatch.setattr(harness.live, "append", append)
    await follow(harness, lambda: bool(refused))
    await settle()

    assert "the schedule owner of this agent stops" in caplog.text
    assert dispatches(agent.session) == []
    assert len(reminder_messages(agent.session)) == 1  # the message was already queued
    assert agent.phase is AgentPhase.IDLE
    agent.submit("and now?")
    await settle()
    harness.clock.advance(3600)
    await settle()
    assert len(refused) == 1
    assert harness.clock.sleeping == 0
    listing = await harness.value(agent, "schedule_list")
    assert [item["id"] for item in listing["reminders"]] == ["rem-1"]


@pytest.mark.parametrize("outcome", ["raise", "refuse"])
async def test_a_rejected_preflight_waits_for_a_management_preflight(
    harness: Harness, outcome: Outcome, caplog: pytest.LogCaptureFixture
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    listener = harness.listener(agent)
    await follow(harness, lambda: harness.clock.sleeps[-1] == 0.25)
    listener.mode = outcome
    harness.clock.advance(0.25)
    await settle()

    assert dispatches(agent.session) == []
    assert "was not confirmed" in caplog.text
    assert harness.clock.sleeping == 0  # no private retry timer
    flushes = listener.flushes
    harness.clock.advance(600)
    await settle()
    assert listener.flushes == flushes

    listener.mode = "ok"
    listing = await harness.value(agent, "schedule_list")
    assert [item["state"] for item in listing["reminders"]] == ["overdue"]
    await settle()
    assert len(dispatches(agent.session)) == 1


async def test_a_rejected_preflight_is_retried_at_the_next_idle_transition(
    harness: Harness,
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    listener = harness.listener(agent)
    listener.mode = "raise"
    await follow(harness, lambda: listener.flushes == 3)  # two for the create, one for the owner
    await settle()
    assert dispatches(agent.session) == []
    assert harness.clock.sleeping == 0

    listener.mode = "ok"
    agent.submit("hello")
    await settle()

    assert len(dispatches(agent.session)) == 1


async def test_a_failed_dispatch_barrier_is_logged_and_never_duplicates(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    listener = harness.listener(agent)
    await follow(harness, lambda: harness.clock.sleeps[-1] == 0.25)
    listener.script("ok", "raise")
    harness.clock.advance(0.25)
    await settle()

    assert "dispatch was appended but not confirmed" in caplog.text
    assert len(dispatches(agent.session)) == 1
    harness.clock.advance(600)
    await settle()
    agent.submit("hello")
    await settle()
    assert len(dispatches(agent.session)) == 1
    assert len(reminder_messages(agent.session)) == 1


async def test_create_whose_barrier_failed_is_recovered_by_a_later_list(harness: Harness) -> None:
    agent = harness.open()
    listener = harness.listener(agent)
    listener.script("ok", "raise")
    error = await harness.error(agent, "schedule_create", prompt="stretch", after_seconds=10)
    assert error["code"] == "persistence_uncertain"

    listing = await harness.value(agent, "schedule_list")

    assert [item["id"] for item in listing["reminders"]] == ["rem-1"]
    await follow(harness, lambda: bool(dispatches(agent.session)))
    await settle()
    assert len(dispatches(agent.session)) == 1
    assert status_of(agent) == "Status: on time"


async def test_deleting_a_reminder_disarms_its_timer(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    await settle()
    assert harness.clock.sleeping == 1
    await harness.value(agent, "schedule_delete", id="rem-1")
    await settle()
    assert harness.clock.sleeping == 0
    harness.clock.advance(60)
    await settle()
    assert dispatches(agent.session) == []


async def test_a_delete_that_wins_the_race_is_never_followed_by_a_dispatch(
    harness: Harness,
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    listener = harness.listener(agent)
    await follow(harness, lambda: harness.clock.sleeps[-1] == 0.25)
    hold = listener.hold()  # the delete's preflight pauses while holding the lock
    async with anyio.create_task_group() as group:
        group.start_soon(partial(harness.value, agent, "schedule_delete", id="rem-1"))
        with anyio.fail_after(WAIT):
            await hold.entered.wait()
        harness.clock.advance(0.25)  # the reminder is due while the delete holds the lock
        await settle()
        # The owner has claimed the agent and waits for the lock inside maintenance.
        assert agent.phase is AgentPhase.MAINTENANCE
        hold.release()
    await settle()

    assert changes(agent.session)[-1] == {"version": 2, "change": "delete", "id": "rem-1"}
    assert dispatches(agent.session) == []
    assert reminder_messages(agent.session) == []


async def test_a_rollback_during_the_preflight_is_rechecked_inside_maintenance(
    harness: Harness,
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    listener = harness.listener(agent)
    await follow(harness, lambda: harness.clock.sleeps[-1] == 0.25)
    hold = listener.hold()
    harness.clock.advance(0.25)
    with anyio.fail_after(WAIT):
        await hold.entered.wait()  # the owner's preflight
    harness.clock.jump_wall(-30)
    hold.release()
    await settle()

    assert dispatches(agent.session) == []
    assert harness.clock.sleeping == 1
    await follow(harness, lambda: bool(dispatches(agent.session)))
    assert harness.clock.wall_ms() == START_MS + 10_000


async def test_a_log_broken_during_the_preflight_dispatches_nothing_and_is_told(
    harness: Harness,
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    listener = harness.listener(agent)
    await follow(harness, lambda: harness.clock.sleeps[-1] == 0.25)
    hold = listener.hold()
    harness.clock.advance(0.25)
    with anyio.fail_after(WAIT):
        await hold.entered.wait()  # the owner's preflight
    harness.live.append(agent.session, "schedule/change", {"version": 2, "change": "?"})
    hold.release()
    await settle()

    assert dispatches(agent.session) == []
    assert reminder_messages(agent.session) == []
    assert agent.session.events[-1].type == "schedule/notice"


async def test_input_that_arrives_during_the_preflight_waits_for_the_delivery(
    harness: Harness,
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    listener = harness.listener(agent)
    await follow(harness, lambda: harness.clock.sleeps[-1] == 0.25)
    hold = listener.hold()
    harness.clock.advance(0.25)
    with anyio.fail_after(WAIT):
        await hold.entered.wait()  # the owner's preflight, inside maintenance
    agent.submit("hi")
    await settle()
    assert agent.phase is AgentPhase.MAINTENANCE and agent.pending == 1

    hold.release()
    await settle()

    assert len(dispatches(agent.session)) == 1
    texts = [data(event)["text"] for event in agent.session.events if event.type == "message/user"]
    assert texts[0].startswith("[Scheduled reminder]") and texts[1] == "hi"


async def test_a_reminder_due_during_a_turn_goes_before_the_input_queued_behind_it(
    harness: Harness,
) -> None:
    gate = Gate()
    agent = harness.open(model=FakeModel(gate))
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    agent.submit("a long question")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()
    agent.submit("second")
    agent.submit("third")
    await follow(harness, lambda: harness.clock.wall_ms() >= START_MS + 10_000)
    assert dispatches(agent.session) == []  # due, but the turn owns the agent

    gate.opened.set()
    await settle()

    texts = [data(event)["text"] for event in agent.session.events if event.type == "message/user"]
    assert texts[0] == "a long question"
    assert texts[1].startswith("[Scheduled reminder]")
    assert texts[2:] == ["second", "third"]
    assert len(dispatches(agent.session)) == 1


async def test_a_management_preflight_during_a_failed_attempt_retries_at_once(
    harness: Harness,
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    listener = harness.listener(agent)
    await follow(harness, lambda: harness.clock.sleeps[-1] == 0.25)
    hold = listener.hold()  # the list's preflight, while the reminder falls due
    listener.script("ok", "raise")  # list: ok; then the owner's own preflight fails
    async with anyio.create_task_group() as group:
        group.start_soon(harness.value, agent, "schedule_list")
        with anyio.fail_after(WAIT):
            await hold.entered.wait()
        harness.clock.advance(0.25)
        await settle()  # the owner now waits for the lock the list holds
        hold.release()
    await settle()

    assert len(dispatches(agent.session)) == 1


async def test_an_invalid_log_is_told_once_and_keeps_the_owner_idle(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    stored = session(create("rem-1", 10), raw({"version": 1, "change": "delete", "id": "rem-5"}))
    harness.clock.jump_wall(60)
    agent = harness.open(resume(stored, at_ms=harness.clock.wall_ms()))
    await settle()

    assert dispatches(agent.session) == []
    assert harness.clock.sleeping == 0
    with caplog.at_level(logging.WARNING):
        assert "invalid at seq 1" in caplog.text
    assert [event.type for event in agent.session.events[3:]] == ["schedule/notice"]
    assert harness.listener(agent).marks[-1] == 4  # the notice was flushed

    # A later lifecycle finds the notice and does not repeat it.
    await agent.aclose()
    harness.live.close(agent.session)
    again = harness.open(resume(agent.session, at_ms=harness.clock.wall_ms()))
    await settle()
    notices = [event for event in again.session.events if event.type == "schedule/notice"]
    assert len(notices) == 1
    assert reminder_messages(again.session) == []


async def test_a_notice_whose_barrier_fails_is_logged_and_told_again_next_time(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    stored = session(create("rem-1", 10), raw({"version": 1, "change": "delete", "id": "rem-5"}))
    agent = harness.open(resume(stored, at_ms=START_MS), publish=False)
    harness.listener(agent).mode = "raise"
    harness.publish(agent)
    await settle()
    assert "the notice of the invalid schedule log was appended but not confirmed" in caplog.text
    assert [event.type for event in agent.session.events[3:]] == ["schedule/notice"]


async def test_a_log_broken_while_live_stops_delivery(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    await follow(harness, lambda: harness.clock.sleeps[-1] == 0.25)
    harness.live.append(agent.session, "schedule/change", {"version": 1, "change": "dispatch"})
    harness.clock.advance(0.25)
    await settle()
    assert len(changes(agent.session)) == 2
    assert reminder_messages(agent.session) == []
    assert harness.clock.sleeping == 0
    assert agent.session.events[-1].type == "schedule/notice"


async def test_a_fork_never_fires_its_parents_reminders(harness: Harness) -> None:
    parent = harness.open()
    await harness.value(parent, "schedule_create", prompt="parent", after_seconds=10)
    child = harness.open(fork(parent.session, "child"))
    await harness.value(child, "schedule_create", prompt="child", after_seconds=20)

    harness.clock.advance(9.75)
    await settle()
    harness.clock.advance(0.25)
    await settle()
    assert [data(event)["id"] for event in dispatches(parent.session)] == ["rem-1"]
    assert dispatches(child.session) == []

    harness.clock.advance(10)
    await settle()
    assert len(dispatches(parent.session)) == 1
    assert [data(event)["id"] for event in dispatches(child.session)] == ["rem-1"]
    assert line_of(child, "Prompt") == '"child"'


async def test_no_sleep_exceeds_the_segment_even_with_a_larger_early_margin() -> None:
    async with anyio.create_task_group() as group:
        config = ScheduleConfig(max_segment_seconds=1, early_wake_seconds=3)
        host = Harness(group, FakeClock(START_MS), config)
        agent = host.open()
        await host.value(agent, "schedule_create", prompt="tea", after_seconds=10)
        await follow(host, lambda: bool(dispatches(agent.session)), limit=50)
        assert max(host.clock.sleeps) <= 1
        assert host.clock.wall_ms() == START_MS + 10_000
        await host.aclose()
        group.cancel_scope.cancel()


async def test_an_agent_closed_while_a_due_reminder_waits_for_it_delivers_nothing(
    harness: Harness,
) -> None:
    gate = Gate()
    agent = harness.open(model=FakeModel(gate))
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    agent.submit("a long question")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()
    await follow(harness, lambda: harness.clock.wall_ms() >= START_MS + 10_000)
    await settle()
    assert agent._claims  # the owner waits for the turn to end

    await agent.aclose()

    assert dispatches(agent.session) == []
    assert reminder_messages(agent.session) == []
    assert not agent._claims


# -- protocol v2: times in zones, recurrence, misfires, updates ------------------------------


def occurrences(agent: Agent) -> list[tuple[str, int]]:
    return [
        (data(event)["occurrenceAt"], data(event)["missed"]) for event in dispatches(agent.session)
    ]


async def run_for(harness: Harness, seconds: float, step: float = 1.0) -> None:
    """Let `seconds` of fake time pass in steps, settling the owner after each."""
    for _ in range(round(seconds / step)):
        await settle()
        harness.clock.advance(step)
    await settle()


async def test_an_at_reminder_in_a_zone_fires_at_that_local_time() -> None:
    async with anyio.create_task_group() as group:
        # 2026-03-29T00:00:00Z: 01:00 CET on Berlin's spring-forward day.
        host = Harness(group, FakeClock(1_774_742_400_000))
        agent = host.open()
        view = await host.value(
            agent, "schedule_create", prompt="tea", at="2026-03-29T02:30", time_zone="Europe/Berlin"
        )
        assert (view["nextAt"], view["nextAtLocal"]) == (
            "2026-03-29T01:30:00.000Z",
            "2026-03-29T03:30:00+02:00",
        )
        await follow(host, lambda: bool(dispatches(agent.session)), limit=200)
        assert host.clock.wall_ms() == 1_774_742_400_000 + 90 * 60_000
        assert line_of(agent, "Occurrence") == (
            "2026-03-29T03:30:00+02:00 (Europe/Berlin) = 2026-03-29T01:30:00.000Z"
        )
        await host.aclose()
        group.cancel_scope.cancel()


async def test_a_recurring_reminder_fires_each_occurrence_once_on_time() -> None:
    async with anyio.create_task_group() as group:
        host = Harness(group, FakeClock(START_MS), ScheduleConfig(min_interval_seconds=1))
        agent = host.open()
        await host.value(agent, "schedule_create", prompt="drink", every_seconds=10, count=3)
        await run_for(host, 60)
        assert occurrences(agent) == [
            ("2026-01-01T00:00:10.000Z", 0),
            ("2026-01-01T00:00:20.000Z", 0),
            ("2026-01-01T00:00:30.000Z", 0),
        ]
        assert [status_of(agent, index) for index in range(3)] == ["Status: on time"] * 3
        assert line_of(agent, "Next", 0) == (
            "2026-01-01T00:00:20+00:00 (UTC) = 2026-01-01T00:00:20.000Z"
        )
        assert line_of(agent, "Next", 2) == "none (this was the last occurrence)"
        assert [data(event)["recordSeq"] for event in dispatches(agent.session)] == [0, 0, 0]
        assert (await host.value(agent, "schedule_list"))["reminders"] == []
        await host.aclose()
        group.cancel_scope.cancel()


async def test_missed_occurrences_catch_up_once_then_back_on_schedule(harness: Harness) -> None:
    hourly = every(3600, first_ms=START_MS + 3_600_000)
    harness.clock.jump_wall(5 * 3600 + 600)  # the Session was cold for five occurrences
    agent = harness.open(resume(session(create2(hourly)), at_ms=harness.clock.wall_ms()))
    await settle()
    assert occurrences(agent) == [("2026-01-01T05:00:00.000Z", 4)]
    assert status_of(agent) == "Status: overdue by 10m 00s"
    missed = line_of(agent, "Missed")
    assert missed.startswith("4 (not delivered when due: this conversation was closed")
    assert data(reminder_messages(agent.session)[0])["source"]["missed"] == 4

    await follow(harness, lambda: len(dispatches(agent.session)) == 2, limit=200)
    assert occurrences(agent)[1] == ("2026-01-01T06:00:00.000Z", 0)
    assert status_of(agent, 1) == "Status: on time"


async def dispatched(agent: Agent, count: int = 1) -> None:
    """Wait (real time, with a deadline) until `count` reminder messages are in the log: the
    owner counts a cron rule's missed occurrences in a worker thread, which `settle()` does
    not wait for (a task awaiting a thread looks blocked)."""
    with anyio.fail_after(WAIT):
        while len(reminder_messages(agent.session)) < count:  # noqa: ASYNC110 (a thread's work)
            await anyio.sleep(0.005)
    await settle()


async def test_a_minute_cron_missed_for_80_days_says_100000_or_more(harness: Harness) -> None:
    minutely = cron("* * * * *", START_MS + 60_000, zone="Europe/Berlin")
    harness.clock.jump_wall(80 * 86_400)
    agent = harness.open(resume(session(create2(minutely)), at_ms=harness.clock.wall_ms()))
    await dispatched(agent)
    assert occurrences(agent) == [("2026-03-22T00:00:00.000Z", 100_000)]
    assert line_of(agent, "Missed").startswith("100000 or more (not delivered when due")
    assert data(reminder_messages(agent.session)[0])["source"]["missed"] == 100_000


async def test_a_cron_catch_up_is_counted_exactly_below_the_cap(harness: Harness) -> None:
    # Berlin springs forward on 29 March: the wall times 02:00-02:45 do not exist that night,
    # and run at the instants of 03:00-03:45 CEST, which are occurrences anyway.
    quarterly = cron("*/15 * * * *", START_MS + 900_000, zone="Europe/Berlin")
    harness.clock.jump_wall(100 * 86_400)  # 2026-04-11T00:00Z
    agent = harness.open(resume(session(create2(quarterly)), at_ms=harness.clock.wall_ms()))
    await dispatched(agent)
    # 100 days of quarter hours (every one of them real), less the one delivered.
    assert occurrences(agent) == [("2026-04-11T00:00:00.000Z", 100 * 96 - 1)]


async def test_the_event_loop_runs_while_a_cron_catch_up_is_counted(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    counting = threading.Event()
    loop_ran = threading.Event()

    def count_when_the_loop_has_run(reminder: Any, due: Any) -> Any:
        counting.set()
        # Blocks the event loop for good if the count runs on it: the loop task never sets it.
        assert loop_ran.wait(WAIT), "the event loop did not run while missed was counted"
        return with_missed(reminder, due)

    async def meanwhile_on_the_loop() -> None:
        with anyio.fail_after(WAIT):
            while not counting.is_set():  # noqa: ASYNC110 (set by a worker thread)
                await anyio.sleep(0.001)
        loop_ran.set()

    monkeypatch.setattr(owner_module, "with_missed", count_when_the_loop_has_run)
    hourly = cron("0 * * * *", START_MS + 3_600_000)
    harness.clock.jump_wall(5 * 3600 + 600)
    async with anyio.create_task_group() as group:
        group.start_soon(meanwhile_on_the_loop)
        agent = harness.open(resume(session(create2(hourly)), at_ms=harness.clock.wall_ms()))
        await dispatched(agent)
    assert occurrences(agent) == [("2026-01-01T05:00:00.000Z", 4)]


async def test_skip_delivers_none_of_the_missed_and_waits_for_the_next(harness: Harness) -> None:
    hourly = every(3600, first_ms=START_MS + 3_600_000, misfire="skip")
    harness.clock.jump_wall(5 * 3600 + 600)
    agent = harness.open(resume(session(create2(hourly)), at_ms=harness.clock.wall_ms()))
    await settle()
    assert dispatches(agent.session) == []
    listing = await harness.value(agent, "schedule_list")
    assert listing["reminders"][0]["nextAt"] == "2026-01-01T06:00:00.000Z"

    await follow(harness, lambda: bool(dispatches(agent.session)), limit=200)
    assert occurrences(agent) == [("2026-01-01T06:00:00.000Z", 0)]
    assert status_of(agent) == "Status: on time"


async def test_a_cron_reminder_follows_wall_time_across_spring_forward() -> None:
    async with anyio.create_task_group() as group:
        # 2026-03-27T12:00Z; New York springs forward on 2026-03-08, Berlin on 03-29.
        host = Harness(group, FakeClock(1_774_612_800_000))
        agent = host.open()
        await host.value(
            agent, "schedule_create", prompt="standup", cron="0 9 * * *", time_zone="Europe/Berlin"
        )
        await follow(host, lambda: len(dispatches(agent.session)) == 3, limit=10_000)
        assert [occurrence for occurrence, _ in occurrences(agent)] == [
            "2026-03-28T08:00:00.000Z",  # 09:00 CET
            "2026-03-29T07:00:00.000Z",  # 09:00 CEST: the clocks moved, the reminder did not
            "2026-03-30T07:00:00.000Z",
        ]
        assert [status_of(agent, index) for index in range(3)] == ["Status: on time"] * 3
        await host.aclose()
        group.cancel_scope.cancel()


async def test_a_forward_jump_past_several_occurrences_catches_up_once(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="drink", every_seconds=600)
    await settle()
    harness.clock.jump_wall(3 * 3600)
    harness.clock.advance(60)
    await settle()
    assert occurrences(agent) == [("2026-01-01T03:00:00.000Z", 17)]
    assert status_of(agent) == "Status: overdue by 1m 00s"


async def test_a_rollback_never_repeats_or_brings_forward_an_occurrence(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="drink", every_seconds=600)
    await follow(harness, lambda: bool(dispatches(agent.session)), limit=100)
    harness.clock.jump_wall(-3600)
    await follow(harness, lambda: len(dispatches(agent.session)) == 2, limit=500)
    assert occurrences(agent) == [
        ("2026-01-01T00:10:00.000Z", 0),
        ("2026-01-01T00:20:00.000Z", 0),
    ]
    assert harness.clock.wall_ms() == START_MS + 20 * 60_000


async def test_a_paused_reminder_is_not_delivered_until_resumed(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="drink", every_seconds=600)
    await harness.value(agent, "schedule_update", id="rem-1", revision=1, paused=True)
    await settle()
    assert harness.clock.sleeping == 0  # nothing to wait for
    harness.clock.advance(3600)
    await settle()
    assert dispatches(agent.session) == []
    view = await harness.value(agent, "schedule_update", id="rem-1", revision=2, paused=False)
    assert view["nextAt"] == "2026-01-01T01:10:00.000Z"  # the paused hour is not made up
    await follow(harness, lambda: bool(dispatches(agent.session)), limit=100)
    assert occurrences(agent) == [("2026-01-01T01:10:00.000Z", 0)]
    assert data(dispatches(agent.session)[0])["recordSeq"] == 2


async def test_an_update_while_sleeping_moves_the_target(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="tea", after_seconds=3600)
    await settle()
    await harness.value(agent, "schedule_update", id="rem-1", revision=1, after_seconds=30)
    await follow(harness, lambda: bool(dispatches(agent.session)), limit=100)
    assert harness.clock.wall_ms() == START_MS + 30_000
    assert data(dispatches(agent.session)[0])["recordSeq"] == 1
    assert line_of(agent, "Rule") == '"once, 30 seconds after it was set"'


async def test_a_v1_reminder_is_delivered_with_a_v2_dispatch(harness: Harness) -> None:
    harness.clock.jump_wall(60)
    agent = harness.open(resume(session(create("rem-1", 10)), at_ms=harness.clock.wall_ms()))
    await settle()
    assert changes(agent.session)[-1] == {
        "version": 2,
        "change": "dispatch",
        "id": "rem-1",
        "occurrenceAt": "2026-01-01T00:00:10.000Z",
        "missed": 0,
        "recordSeq": 0,
    }


async def test_an_armed_owner_waits_on_the_alarm_without_a_task(harness: Harness) -> None:
    agent = harness.open()
    alarm = harness.plugin.alarms.for_clock(harness.clock)
    await harness.value(agent, "schedule_create", prompt="tea", after_seconds=3600)
    await settle()
    assert len(agent.tasks) == 0  # no owner task: just the alarm's entry
    assert len(alarm) == 1

    await harness.value(agent, "schedule_delete", id="rem-1")
    await settle()
    assert len(alarm) == 0
    assert harness.clock.sleeping == 0

    await harness.value(agent, "schedule_create", prompt="tea", after_seconds=10)
    await follow(harness, lambda: bool(dispatches(agent.session)), limit=100)
    assert harness.clock.wall_ms() == START_MS + 10_000


async def test_an_owner_stopped_before_its_first_step_sets_no_alarm(harness: Harness) -> None:
    agent = harness.open()
    alarm = harness.plugin.alarms.for_clock(harness.clock)
    await harness.value(agent, "schedule_create", prompt="tea", after_seconds=3600)
    await settle()
    installation = harness.plugin._installations[agent]
    installation._owner.recompute()  # its task is started, not yet run
    await installation.aclose()
    await settle()
    assert len(alarm) == 0
    assert harness.clock.sleeping == 0


# -- a reminder's turn is never lost: follow-ups queued again on install ----------------------


async def stop(harness: Harness, agent: Agent) -> None:
    """The process ends: the agent closes (its queued input is dropped), the Session too."""
    await agent.aclose()
    harness.live.close(agent.session)


async def delivered_then_crashed(harness: Harness) -> tuple[Session, int]:
    """Deliver one reminder, then "crash" after its dispatch was durable and before its
    follow-up was stored: the stored log is the live log up to the dispatch."""
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    await follow(harness, lambda: bool(reminder_messages(agent.session)))
    [dispatch] = dispatches(agent.session)
    await stop(harness, agent)
    return Session(agent.session.header, agent.session.events[: dispatch.seq + 1]), dispatch.seq


async def test_a_dispatch_whose_followup_died_with_the_process_is_queued_again_once(
    harness: Harness,
) -> None:
    stored, dispatch_seq = await delivered_then_crashed(harness)
    harness.clock.advance(90)
    model = FakeModel()
    agent = harness.open(resume(stored, at_ms=harness.clock.wall_ms()), model=model)
    await settle()

    assert len(dispatches(agent.session)) == 1, "nothing is dispatched again"
    [message] = reminder_messages(agent.session)
    assert data(message)["source"] == {
        "kind": "schedule",
        "scheduleId": "rem-1",
        "occurrenceAt": "2026-01-01T00:00:10.000Z",
        "missed": 0,
        "dispatchSeq": dispatch_seq,
        "requeued": True,
    }
    assert line_of(agent, "Prompt") == '"stretch"'
    assert status_of(agent) == "Status: overdue by 1m 30s"
    assert [request.messages[-1].text for request in model.requests] == [frame_of(agent)]
    assert agent.session.events[-1].type == "turn/end"

    await stop(harness, agent)
    again = FakeModel()
    later = harness.open(resume(agent.session, at_ms=harness.clock.wall_ms()), model=again)
    await settle()
    assert len(reminder_messages(later.session)) == 1, "once stored, never again"
    assert again.requests == []


async def test_a_requeued_followup_lost_again_is_queued_again_by_the_next_install(
    harness: Harness,
) -> None:
    stored, dispatch_seq = await delivered_then_crashed(harness)
    gate = Gate()
    resumed = resume(stored, at_ms=harness.clock.wall_ms())
    busy = harness.open(resumed, model=FakeModel(gate), publish=False)
    busy.submit("a question asked right after the resume")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()
    harness.publish(busy)
    await settle()
    assert busy._claims  # the re-queue waits for the turn; the process dies before it is stored
    await stop(harness, busy)
    assert reminder_messages(busy.session) == []

    agent = harness.open(resume(busy.session, at_ms=harness.clock.wall_ms()))
    await settle()
    [message] = reminder_messages(agent.session)
    assert data(message)["source"]["dispatchSeq"] == dispatch_seq
    assert len(dispatches(agent.session)) == 1


async def resumed_in_a_turn(harness: Harness, text: str) -> tuple[Agent, Gate]:
    """A Session whose dispatch lost its follow-up, resumed with a turn (`text`) running when
    the plugin sees it: the re-queue waits for that turn."""
    stored, _seq = await delivered_then_crashed(harness)
    gate = Gate()
    resumed = resume(stored, at_ms=harness.clock.wall_ms())
    agent = harness.open(resumed, model=FakeModel(gate), publish=False)
    agent.submit(text)
    with anyio.fail_after(WAIT):
        await gate.entered.wait()
    harness.publish(agent)
    await settle()
    return agent, gate


async def test_the_requeue_goes_before_input_queued_behind_it(harness: Harness) -> None:
    agent, gate = await resumed_in_a_turn(harness, "first")
    agent.submit("second")
    gate.opened.set()
    await settle()
    kinds = [
        data(event)["source"]["kind"]
        for event in agent.session.events
        if event.type == "message/user"
    ]
    assert kinds[-3:] == ["user", "schedule", "user"]


async def test_the_followups_of_a_live_owner_are_never_queued_twice(harness: Harness) -> None:
    gate = Gate()
    agent = harness.open(model=FakeModel(gate))
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    agent.submit("a long question")
    with anyio.fail_after(WAIT):
        await gate.entered.wait()
    await follow(harness, lambda: harness.clock.wall_ms() >= START_MS + 10_000)
    await harness.value(agent, "schedule_list")  # a management preflight: recompute
    gate.opened.set()
    await settle()
    assert len(dispatches(agent.session)) == 1
    assert len(reminder_messages(agent.session)) == 1


async def test_an_agent_closed_before_the_requeue_queues_nothing(harness: Harness) -> None:
    agent, _gate = await resumed_in_a_turn(harness, "busy")
    assert agent._claims  # the re-queue waits for the turn
    await agent.aclose()
    assert reminder_messages(agent.session) == []


async def test_a_followup_that_cannot_be_framed_again_is_logged_and_dropped(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    stored, dispatch_seq = await delivered_then_crashed(harness)
    harness.clock.jump_wall((MAX_TIMESTAMP_MS - harness.clock.wall_ms()) / 1000 + 10)
    with caplog.at_level(logging.ERROR):
        agent = harness.open(resume(stored, at_ms=START_MS))
        await settle()
    assert reminder_messages(agent.session) == []
    assert f"the follow-up of dispatch {dispatch_seq} could not be queued again" in caplog.text


async def test_a_rejected_log_queues_no_followup_again(harness: Harness) -> None:
    stored, _seq = await delivered_then_crashed(harness)
    broken = Session(
        stored.header, [*stored.events, *events([raw({"version": 9})], first_seq=len(stored))]
    )
    agent = harness.open(resume(broken, at_ms=harness.clock.wall_ms()))
    await settle()
    assert reminder_messages(agent.session) == []
