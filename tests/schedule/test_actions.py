"""The person's actions (`dsh_session_action`): create, delete, pause, resume, snooze."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from pydantic import JsonValue

from dsh import ActionError, Agent
from dsh.session.log import Session
from dsh.testing import settled
from dsh.web.live import LiveHub
from tests.support.deadlines import WAIT

from .conftest import (
    START_MS,
    Harness,
    changes,
    data,
    dispatches,
    post_action,
    reminder_messages,
    settle,
    tool_context,
)
from .logs import create2, raw, record, resume, session

pytestmark = pytest.mark.anyio


async def pass_time(harness: Harness, seconds: float) -> None:
    """Let `seconds` of fake time pass, waking the owner at every sleep it asks for."""
    target = harness.clock.wall_ms() + round(seconds * 1000)
    while True:
        await settle()
        remaining = (target - harness.clock.wall_ms()) / 1000
        if remaining <= 0:
            return
        clock = harness.clock
        clock.advance(min(clock.sleeps[-1], remaining) if clock.sleeping else remaining)


async def act(harness: Harness, agent: Agent, name: str, **args: JsonValue) -> Any:
    pending = harness.plugin.dsh_session_action(agent=agent, name=name, args=args)
    assert pending is not None
    return await pending


async def refused(harness: Harness, agent: Agent, name: str, **args: JsonValue) -> ActionError:
    with pytest.raises(ActionError) as caught:
        await act(harness, agent, name, **args)
    return caught.value


async def test_pause_and_resume_answer_the_new_view_and_move_delivery(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)

    paused = await act(harness, agent, "pause", id="rem-1")
    await pass_time(harness, 30)
    assert dispatches(agent.session) == []
    resumed = await act(harness, agent, "resume", id="rem-1", revision=2)
    await settle()

    assert (paused["reminder"]["state"], paused["reminder"]["revision"]) == ("paused", 2)
    assert (resumed["reminder"]["state"], resumed["reminder"]["revision"]) == ("overdue", 3)
    assert [change["record"]["paused"] for change in changes(agent.session)[1:3]] == [True, False]
    assert len(dispatches(agent.session)) == 1  # the one-shot fires once, overdue


async def test_create_takes_the_tool_s_arguments_and_answers_the_durable_view(
    harness: Harness,
) -> None:
    agent = harness.open()
    flushes = harness.listener(agent).flushes

    created = await act(
        harness, agent, "create", prompt=" stretch ", every_seconds=3600, time_zone="Asia/Tokyo"
    )

    view = created["reminder"]
    assert (view["id"], view["prompt"], view["timeZone"]) == ("rem-1", "stretch", "Asia/Tokyo")
    assert view["rule"] == {"kind": "every", "seconds": 3600}
    assert "firesWhenClosed" in view
    assert harness.listener(agent).flushes > flushes  # answered after its barrier
    assert [change["change"] for change in changes(agent.session)] == ["create"]


@pytest.mark.parametrize(
    ("args", "code", "problem"),
    [
        ({"prompt": "stretch"}, "invalid_rule", "give exactly one rule"),
        ({"prompt": "  ", "after_seconds": 60}, "invalid_prompt", "prompt is empty"),
        ({"prompt": "x", "after_seconds": 60, "at": "2030-01-01T09:00"}, "invalid_rule", "got"),
    ],
)
async def test_create_refuses_what_the_tool_refuses_as_422(
    harness: Harness, args: dict[str, JsonValue], code: str, problem: str
) -> None:
    agent = harness.open()

    error = await refused(harness, agent, "create", **args)

    assert (error.status, error.code) == (422, code)
    assert problem in error.message
    assert changes(agent.session) == []


async def test_create_with_an_unknown_argument_is_invalid_arguments(harness: Harness) -> None:
    agent = harness.open()
    with pytest.raises(ActionError) as caught:
        harness.plugin.dsh_session_action(
            agent=agent, name="create", args={"prompt": "x", "after_seconds": 5, "when": 1}
        )
    assert (caught.value.status, caught.value.code) == (422, "invalid_arguments")
    assert "when" in caught.value.message


async def test_an_action_answers_only_after_its_change_is_confirmed(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=600)
    listener = harness.listener(agent)
    listener.hold().release()  # the preflight passes at once
    after_append = listener.hold()  # the barrier after the append waits
    answered: list[Any] = []

    async def pause() -> None:
        answered.append(await act(harness, agent, "pause", id="rem-1"))

    async with anyio.create_task_group() as group:
        group.start_soon(pause)
        with anyio.fail_after(WAIT):
            await after_append.entered.wait()
        assert changes(agent.session)[-1]["change"] == "update"  # appended, not yet confirmed
        assert answered == []
        after_append.release()
    assert answered[0]["reminder"]["state"] == "paused"


async def test_snooze_moves_a_one_shot_by_that_long(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="tea", after_seconds=600)

    snoozed = await act(harness, agent, "snooze", id="rem-1", seconds=300)
    await pass_time(harness, 900)

    assert snoozed["reminder"]["nextAt"] == "2026-01-01T00:15:00.000Z"
    assert [data(event)["occurrenceAt"] for event in dispatches(agent.session)] == [
        "2026-01-01T00:15:00.000Z"
    ]


async def test_snooze_moves_a_recurring_reminder_s_next_occurrence_only(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="drink", every_seconds=3600)

    await act(harness, agent, "snooze", id="rem-1", seconds=600)
    await pass_time(harness, 2 * 3600 + 60)

    assert [data(event)["occurrenceAt"] for event in dispatches(agent.session)] == [
        "2026-01-01T01:10:00.000Z",  # the moved one
        "2026-01-01T02:00:00.000Z",  # then the rule's own
    ]


async def test_the_rule_in_words_says_a_one_shot_was_snoozed_and_to_when(
    harness: Harness,
) -> None:
    agent = harness.open()
    created = await harness.value(
        agent, "schedule_create", prompt="tea", after_seconds=60, time_zone="Europe/Berlin"
    )

    snoozed = await act(harness, agent, "snooze", id="rem-1", seconds=300)

    assert created["ruleText"] == "once, 1 minute after it was set"
    assert snoozed["reminder"]["ruleText"] == "once, snoozed to 2026-01-01 01:06 (Europe/Berlin)"


async def test_the_rule_in_words_says_a_recurring_one_s_next_is_snoozed_until_it_is_delivered(
    harness: Harness,
) -> None:
    agent = harness.open()
    await harness.value(
        agent, "schedule_create", prompt="drink", every_seconds=3600, time_zone="UTC"
    )

    snoozed = await act(harness, agent, "snooze", id="rem-1", seconds=630)
    await pass_time(harness, 3600 + 700)
    listed = await harness.value(agent, "schedule_list")

    assert snoozed["reminder"]["ruleText"] == "every 1 hour; next snoozed to 2026-01-01 01:10:30"
    assert [view["ruleText"] for view in listed["reminders"]] == ["every 1 hour"]


async def test_a_snooze_by_whole_periods_lands_on_the_rule_and_reads_as_the_rule(
    harness: Harness,
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="drink", every_seconds=600)

    snoozed = await act(harness, agent, "snooze", id="rem-1", seconds=600)

    assert snoozed["reminder"]["nextAt"] == "2026-01-01T00:20:00.000Z"
    assert snoozed["reminder"]["ruleText"] == "every 10 minutes"


async def test_snoozing_a_due_reminder_brings_it_back_that_long_from_now(
    harness: Harness,
) -> None:
    paused = record(first_ms=START_MS + 10_000, paused=True)  # due while paused
    harness.clock.jump_wall(60)
    agent = harness.open(resume(session(create2(paused)), at_ms=harness.clock.wall_ms()))
    await act(harness, agent, "resume", id="rem-1")  # overdue now: fires at once
    await settle()
    assert len(dispatches(agent.session)) == 1

    await harness.value(agent, "schedule_create", prompt="again", after_seconds=1)
    harness.clock.jump_wall(120)  # rem-2 is overdue, but the owner has not woken yet
    snoozed = await act(harness, agent, "snooze", id="rem-2", seconds=60)

    assert snoozed["reminder"]["nextAt"] == "2026-01-01T00:04:00.000Z"


async def test_delete_removes_the_reminder_and_a_second_one_is_a_conflict(
    harness: Harness,
) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)

    deleted = await act(harness, agent, "delete", id="rem-1", revision=1)
    again = await refused(harness, agent, "delete", id="rem-1")
    await pass_time(harness, 30)

    assert deleted == {"id": "rem-1", "deleted": True}
    assert (again.status, again.code) == (409, "schedule_not_found")
    assert "nothing was changed" in again.message
    assert dispatches(agent.session) == [] and reminder_messages(agent.session) == []


async def test_a_stale_revision_is_a_conflict_that_changes_nothing(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=600)
    await act(harness, agent, "pause", id="rem-1")
    length = len(agent.session)

    errors = [
        await refused(harness, agent, name, id="rem-1", revision=1, **extra)
        for name, extra in [("resume", {}), ("snooze", {"seconds": 60}), ("delete", {})]
    ]

    assert [(error.status, error.code) for error in errors] == [(409, "schedule_conflict")] * 3
    assert '"revision": 2' in errors[0].message  # the current view comes with it
    assert len(agent.session) == length


async def test_asking_for_what_already_is_is_a_conflict(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=600)

    running = await refused(harness, agent, "resume", id="rem-1")
    await act(harness, agent, "pause", id="rem-1")
    paused = await refused(harness, agent, "pause", id="rem-1")
    snoozed = await refused(harness, agent, "snooze", id="rem-1", seconds=60)

    assert (running.status, running.code) == (409, "schedule_not_paused")
    assert (paused.status, paused.code) == (409, "schedule_paused")
    assert (snoozed.status, snoozed.code) == (409, "schedule_paused")
    assert "resume it rather than snooze it" in snoozed.message
    assert len(changes(agent.session)) == 2  # the create and the one pause


@pytest.mark.parametrize(
    ("name", "args", "problem"),
    [
        ("pause", {}, "id: Field required"),
        ("delete", {"id": "reminder-1"}, "is not a reminder id"),
        ("resume", {"id": "rem-1", "colour": "red"}, "colour: Extra inputs are not permitted"),
        ("snooze", {"id": "rem-1"}, "seconds: Field required"),
        ("snooze", {"id": "rem-1", "seconds": 0}, "seconds: Input should be greater"),
        ("snooze", {"id": "rem-1", "seconds": "60"}, "seconds: Input should be a valid integer"),
        ("pause", {"id": "rem-1", "revision": 0}, "revision: Input should be greater"),
    ],
)
async def test_bad_args_are_refused_before_anything_runs(
    harness: Harness, name: str, args: dict[str, JsonValue], problem: str
) -> None:
    agent = harness.open()
    flushes = harness.listener(agent).flushes

    with pytest.raises(ActionError) as caught:
        harness.plugin.dsh_session_action(agent=agent, name=name, args=args)

    assert (caught.value.status, caught.value.code) == (422, "invalid_arguments")
    assert problem in caught.value.message
    assert harness.listener(agent).flushes == flushes


async def test_another_action_name_is_not_this_plugin_s(harness: Harness) -> None:
    agent = harness.open()
    assert harness.plugin.dsh_session_action(agent=agent, name="fly", args={}) is None


async def test_a_session_without_reminders_says_so(harness: Harness) -> None:
    root = harness.open()
    child_session = Session.new("child", cwd="/work", created_at=START_MS, delegation_depth=1)
    child = harness.open(child_session, parent=root)
    early = harness.open(publish=False)

    refusals = [await refused(harness, agent, "pause", id="rem-1") for agent in (child, early)]
    await harness.plugin_scope.aclose()  # unloaded: the root's installation is gone too
    gone = await refused(harness, root, "pause", id="rem-1")

    for error in [*refusals, gone]:
        assert (error.status, error.code) == (404, "schedule_not_installed")
    assert "root Sessions made live after it loaded" in gone.message


async def test_a_snooze_past_until_is_invalid(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(
        agent,
        "schedule_create",
        prompt="drink",
        every_seconds=3600,
        until="2026-01-01T01:30:00Z",
    )

    error = await refused(harness, agent, "snooze", id="rem-1", seconds=3600)

    assert (error.status, error.code) == (422, "invalid_rule")
    assert "after its until" in error.message


async def test_unconfirmed_storage_is_503_and_says_what_was_appended(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=600)
    listener = harness.listener(agent)

    listener.script("refuse")
    before = await refused(harness, agent, "pause", id="rem-1")
    listener.script("ok", "raise")
    after = await refused(harness, agent, "pause", id="rem-1")

    assert (before.status, before.code) == (503, "persistence_unavailable")
    assert "nothing was changed" in before.message
    assert (after.status, after.code) == (503, "persistence_uncertain")
    assert "revision 2 of rem-1 was appended" in after.message


async def test_a_rejected_log_refuses_every_action(harness: Harness) -> None:
    log = session(create2(record()), raw({"version": 2, "change": "nope"}))
    agent = harness.open(resume(log, at_ms=START_MS))

    error = await refused(harness, agent, "delete", id="rem-1")

    assert (error.status, error.code) == (409, "schedule_log_invalid")


# -- end to end: a real Host, its HTTP API and the plugin's other hooks ---------------------


async def test_the_api_shows_the_state_and_runs_actions_with_their_statuses(
    api: tuple[Any, httpx.AsyncClient],
) -> None:
    host, http = api
    session_id = (await http.post("/api/sessions")).json()["session"]["id"]
    agent = host.agent(session_id)
    outcome = await agent.tools.get("schedule_create").run(
        agent.tools.get("schedule_create").arguments(prompt="tea", every_seconds=3600),
        tool_context(agent),
    )
    assert outcome["id"] == "rem-1"
    await settled(agent)

    shown = (await http.get(f"/api/sessions/{session_id}")).json()["plugins"]["tool-schedule"]
    paused = await post_action(http, session_id, "pause", id="rem-1")
    conflict = await post_action(http, session_id, "pause", id="rem-1")
    bad = await post_action(http, session_id, "snooze", id="rem-1", seconds=-1)
    unknown = await post_action(http, session_id, "fly")
    after = (await http.get(f"/api/sessions/{session_id}")).json()["plugins"]["tool-schedule"]

    assert [view["state"] for view in shown["reminders"]] == ["scheduled"]
    assert paused.status_code == 200 and paused.json()["result"]["reminder"]["state"] == "paused"
    assert (conflict.status_code, conflict.json()["error"]["code"]) == (409, "schedule_paused")
    assert (bad.status_code, bad.json()["error"]["code"]) == (422, "invalid_arguments")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "unknown_action")
    assert [view["state"] for view in after["reminders"]] == ["paused"]
    assert await host.session_wake_at(session_id) is None  # paused: nothing to wake for

    await host.close_session(session_id)
    cold = (await http.get(f"/api/sessions/{session_id}")).json()
    resumed = await post_action(http, session_id, "resume", id="rem-1")

    assert cold["live"] is False and cold["plugins"]["tool-schedule"] == after
    assert resumed.status_code == 200  # the cold Session was made live first
    assert resumed.json()["result"]["reminder"]["state"] == "scheduled"
    assert host.agent(session_id) is not None
    assert await host.session_wake_at(session_id) == START_MS + 3_600_000


def state_frames(subscription: Any) -> list[Any]:
    frames = []
    while True:
        try:
            frame = json.loads(subscription.frames.receive_nowait())
        except (anyio.WouldBlock, anyio.EndOfStream):
            return frames
        if frame["kind"] == "state":
            frames.append(frame)


async def test_live_state_frames_follow_each_durable_change_of_the_reminders(
    api: tuple[Any, httpx.AsyncClient],
) -> None:
    host, http = api
    hub = LiveHub(host, queue_frames=256)
    hub.start()
    try:
        session_id = (await http.post("/api/sessions")).json()["session"]["id"]
        agent = host.agent(session_id)
        subscription = hub.subscribe(session_id, len(agent.session), lambda: None)
        create = agent.tools.get("schedule_create")
        await create.run(create.arguments(prompt="tea", after_seconds=600), tool_context(agent))
        created = state_frames(subscription)
        await post_action(http, session_id, "pause", id="rem-1")
        paused = state_frames(subscription)
        await host.live.flush(agent.session)  # nothing changed: no frame
        unchanged = state_frames(subscription)
        subscription.close()
    finally:
        hub.close()

    def shown(frames: list[Any]) -> list[list[tuple[str, str]]]:
        assert all(frame["plugin"] == "tool-schedule" for frame in frames)
        return [
            [(view["id"], view["state"]) for view in frame["state"]["reminders"]]
            for frame in frames
        ]

    assert shown(created)[-1] == [("rem-1", "scheduled")]
    assert shown(paused) == [[("rem-1", "paused")]]
    assert unchanged == []
