"""Snoozing a delivered reminder: a new one-shot, linked to the occurrence (`schedule/snooze`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from pydantic import JsonValue

from dsh import ActionError, Agent
from dsh.session.log import Session
from dsh.testing import FakeClock, settled
from dsh_tool_schedule.config import ScheduleConfig
from dsh_tool_schedule.presentation import schedule_reminder_presentation
from dsh_tool_schedule.snoozes import SNOOZE_TYPE, decode_snooze, snooze_view, snoozed_as

from .conftest import START_MS, Harness, changes, dispatches, post_action, settle, tool_context
from .logs import create2, raw, record, session
from .test_actions import act, pass_time, refused

pytestmark = pytest.mark.anyio


def links(session: Session) -> list[Any]:
    return [event.data for event in session.events if event.type == SNOOZE_TYPE]


async def delivered(harness: Harness, agent: Agent, prompt: str = "stretch") -> int:
    """The seq of the dispatch of a one-shot reminder that fired 10 s after it was set."""
    before = len(dispatches(agent.session))
    await harness.value(agent, "schedule_create", prompt=prompt, after_seconds=10)
    await pass_time(harness, 15)
    found = dispatches(agent.session)
    assert len(found) == before + 1
    return found[-1].seq


async def test_a_delivered_reminder_snoozed_comes_back_as_a_new_linked_one_shot(
    harness: Harness,
) -> None:
    agent = harness.open()
    seq = await delivered(harness, agent)

    answer = await act(harness, agent, "snooze", dispatchSeq=seq, seconds=600)

    reminder = answer["reminder"]
    assert answer["snoozedFrom"] == {
        "id": "rem-1",
        "dispatchSeq": seq,
        "occurrenceAt": "2026-01-01T00:00:10.000Z",
    }
    assert (reminder["id"], reminder["prompt"], reminder["state"]) == (
        "rem-2",
        "stretch",
        "scheduled",
    )
    assert reminder["nextAt"] == "2026-01-01T00:10:15.000Z"  # ten minutes from the snooze
    assert changes(agent.session)[-1]["record"]["rule"] == {"kind": "after", "seconds": 600}
    assert links(agent.session) == [{"version": 1, "id": "rem-2", "dispatchSeq": seq}]
    assert harness.listener(agent).flushes > 0
    await pass_time(harness, 600)
    assert [event.data["id"] for event in dispatches(agent.session)] == ["rem-1", "rem-2"]


async def test_snoozing_one_occurrence_twice_answers_with_the_first_snooze(
    harness: Harness,
) -> None:
    agent = harness.open()
    seq = await delivered(harness, agent)

    first = await act(harness, agent, "snooze", dispatchSeq=seq, seconds=600)
    second = await act(harness, agent, "snooze", dispatchSeq=seq, seconds=3600)

    assert second == first and len(links(agent.session)) == 1
    await pass_time(harness, 700)  # the snoozed reminder fired: it is finished
    third = await act(harness, agent, "snooze", dispatchSeq=seq, seconds=60)
    assert third["reminder"]["id"] == "rem-3" and len(links(agent.session)) == 2


async def test_only_a_delivered_reminder_can_be_snoozed_so(harness: Harness) -> None:
    agent = harness.open()
    seq = await delivered(harness, agent)

    for not_one in (0, seq + 1, 10_000):
        error = await refused(harness, agent, "snooze", dispatchSeq=not_one, seconds=60)
        assert (error.status, error.code) == (409, "schedule_not_found")
        assert f"event {not_one} is not a delivered reminder" in error.message
    assert links(agent.session) == []


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"dispatchSeq": 3}, "seconds: Field required"),
        ({"dispatchSeq": -1, "seconds": 60}, "dispatchSeq: Input should be greater"),
        ({"dispatchSeq": "3", "seconds": 60}, "dispatchSeq: Input should be a valid integer"),
        ({"dispatchSeq": 3, "seconds": 60, "id": "rem-1"}, "id: Extra inputs"),
    ],
)
async def test_bad_snooze_args_are_refused_before_anything_runs(
    harness: Harness, args: dict[str, JsonValue], problem: str
) -> None:
    agent = harness.open()
    with pytest.raises(ActionError) as caught:
        harness.plugin.dsh_session_action(agent=agent, name="snooze", args=args)
    assert (caught.value.status, caught.value.code) == (422, "invalid_arguments")
    assert problem in caught.value.message


@asynccontextmanager
async def limited(max_active: int, max_per_turn: int) -> AsyncIterator[Harness]:
    """A harness whose Sessions have these limits."""
    config = ScheduleConfig(max_active=max_active, max_per_turn=max_per_turn)
    async with anyio.create_task_group() as group:
        host = Harness(group, FakeClock(START_MS), config)
        try:
            yield host
        finally:
            await host.aclose()
            group.cancel_scope.cancel()


async def test_a_snooze_is_a_persons_not_a_turns_create() -> None:
    async with limited(max_active=5, max_per_turn=1) as harness:
        agent = harness.open()
        seq = await delivered(harness, agent)  # its delivery starts a new turn
        await harness.value(agent, "schedule_create", prompt="x", after_seconds=600)
        refusal = await harness.error(agent, "schedule_create", prompt="y", after_seconds=60)
        snoozed = await act(harness, agent, "snooze", dispatchSeq=seq, seconds=600)
    assert refusal["code"] == "limit_exceeded" and snoozed["reminder"]["id"] == "rem-3"


async def test_a_snooze_counts_against_the_active_limit() -> None:
    async with limited(max_active=1, max_per_turn=5) as harness:
        agent = harness.open()
        seq = await delivered(harness, agent)
        await harness.value(agent, "schedule_create", prompt="x", after_seconds=600)
        error = await refused(harness, agent, "snooze", dispatchSeq=seq, seconds=60)
    assert (error.status, error.code) == (409, "limit_exceeded")
    assert "already has 1 active reminders" in error.message


async def test_the_card_of_a_snoozed_occurrence_names_its_snooze_and_the_link_has_a_view(
    harness: Harness,
) -> None:
    agent = harness.open()
    seq = await delivered(harness, agent)
    await act(harness, agent, "snooze", dispatchSeq=seq, seconds=600)
    await settle()
    link = next(event for event in agent.session.events if event.type == SNOOZE_TYPE)

    receipt = harness.plugin.dsh_event_view(session=agent.session, event=agent.session.event(seq))
    view = harness.plugin.dsh_event_view(session=agent.session, event=link)

    assert receipt is not None and receipt["snoozedAs"] == "rem-2"
    assert view == {
        "snooze": {
            "id": "rem-2",
            "dispatchSeq": seq,
            "fromId": "rem-1",
            "prompt": "stretch",
            "nextAt": "2026-01-01T00:10:15.000Z",
            "nextAtLocal": "2026-01-01T00:10:15+00:00",
            "timeZone": "UTC",
        }
    }
    assert snoozed_as(agent.session, seq + 100) is None


def test_a_link_is_read_strictly_and_shows_what_there_is() -> None:
    stored = session(
        create2(record()),  # seq 0: rem-1
        raw({"version": 2, "change": "dispatch", "id": "rem-1",
             "occurrenceAt": "2026-01-01T00:00:10.000Z", "missed": 0, "recordSeq": 0}),
        (SNOOZE_TYPE, {"version": 1, "id": "rem-9", "dispatchSeq": 1}),  # no create
        (SNOOZE_TYPE, {"version": 1, "id": "rem-9", "dispatchSeq": 0}),  # not a dispatch
        (SNOOZE_TYPE, {"version": 1, "id": "rem-9", "dispatchSeq": 99}),  # nowhere
        (SNOOZE_TYPE, {"version": 2, "id": "rem-9", "dispatchSeq": 1}),  # malformed
        raw({"version": 2, "change": "nope"}),  # seq 6: not a change at all
        (SNOOZE_TYPE, {"version": 1, "id": "rem-9", "dispatchSeq": 6}),
    )  # fmt: skip
    assert decode_snooze({"version": 1, "id": "rem-2", "dispatchSeq": 1, "x": 1}) is None
    assert snooze_view(stored, 2) == {
        "snooze": {"id": "rem-9", "dispatchSeq": 1, "fromId": "rem-1"}
    }
    assert snooze_view(stored, 3) == {"snooze": {"id": "rem-9", "dispatchSeq": 0, "fromId": None}}
    assert snooze_view(stored, 4) == {"snooze": {"id": "rem-9", "dispatchSeq": 99, "fromId": None}}
    assert snooze_view(stored, 5) is None
    assert snooze_view(stored, 7) == {"snooze": {"id": "rem-9", "dispatchSeq": 6, "fromId": None}}
    assert snoozed_as(stored, 0) == "rem-9"  # past the link of another dispatch
    receipt = schedule_reminder_presentation(stored, 1)
    assert receipt is not None and receipt["snoozedAs"] == "rem-9"


async def test_through_the_api_a_fired_reminder_is_an_unread_alert_snoozed_on_a_closed_session(
    api: tuple[Any, httpx.AsyncClient],
) -> None:
    host, http = api
    session_id = (await http.post("/api/sessions")).json()["session"]["id"]
    agent = host.agent(session_id)
    create = agent.tools.get("schedule_create")
    await create.run(create.arguments(prompt="tea", after_seconds=10), tool_context(agent))
    clock = host.clock
    while not dispatches(agent.session):
        await settle()
        clock.advance(clock.sleeps[-1] if clock.sleeping else 1)
    seq = dispatches(agent.session)[0].seq
    await settled(agent)
    await host.attention.settled()

    rows = (await http.get("/api/sessions")).json()["sessions"]
    await host.close_session(session_id)
    snoozed = await post_action(http, session_id, "snooze", dispatchSeq=seq, seconds=600)
    state = (await http.get(f"/api/sessions/{session_id}")).json()["plugins"]["tool-schedule"]
    done = await http.post(f"/api/sessions/{session_id}/read", json={"throughSeq": seq})

    assert [row["unread"] for row in rows if row["id"] == session_id] == [1]
    assert snoozed.status_code == 200, snoozed.text
    assert snoozed.json()["result"]["snoozedFrom"]["dispatchSeq"] == seq
    assert host.agent(session_id) is not None  # the closed Session was made live for it
    assert [view["prompt"] for view in state["reminders"]] == ["tea"]
    assert done.json() == {"unread": 0}
