"""A delivered reminder as an alert: its prompt, when it was due and how late, a tag each."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import JsonValue

from dsh_tool_schedule.alerts import OVERDUE_AFTER_MS, reminder_alert
from dsh_tool_schedule.series import COUNT_CAP

from .conftest import Harness, dispatches
from .test_actions import pass_time

pytestmark = pytest.mark.anyio

RECEIPT: dict[str, JsonValue] = {
    "scheduleId": "rem-1",
    "prompt": "stretch",
    "occurrenceAt": "2026-03-30T07:00:00.000Z",
    "deliveredAt": "2026-03-30T07:00:00.004Z",
    "missed": 0,
    "timeZone": "Europe/Berlin",
}


def alert(**changes: Any) -> dict[str, JsonValue]:
    return reminder_alert({**RECEIPT, **changes}, "s1")


def test_an_alert_is_titled_by_the_prompt_and_tagged_by_its_occurrence() -> None:
    assert alert() == {
        "title": "stretch",
        "body": "Due at 09:00 (Europe/Berlin)",
        "tag": "s1/rem-1@2026-03-30T07:00:00.000Z",
    }
    assert alert(occurrenceAt="2026-03-31T07:00:00.000Z")["tag"] != alert()["tag"]


@pytest.mark.parametrize(
    ("delivered", "missed", "body"),
    [
        ("2026-03-30T07:00:59.999Z", 0, "Due at 09:00 (Europe/Berlin)"),  # under a minute: on time
        ("2026-03-30T07:01:00.000Z", 0, "Due at 09:00 (Europe/Berlin), 1 minute late"),
        ("2026-03-30T09:12:30.000Z", 0, "Due at 09:00 (Europe/Berlin), 2 hours 12 minutes late"),
        (None, 1, "Due at 09:00 (Europe/Berlin); 1 earlier time was missed"),
        (
            "2026-03-30T07:00:00.000Z",
            3,
            "Due at 09:00 (Europe/Berlin); 3 earlier times were missed",
        ),
        (
            "2026-03-30T07:00:00.000Z",
            99_999,
            "Due at 09:00 (Europe/Berlin); 99999 earlier times were missed",
        ),
        # The count stops at the cap, which stands for that many or more.
        (
            "2026-03-30T07:00:00.000Z",
            100_000,
            "Due at 09:00 (Europe/Berlin); 100000 or more earlier times were missed",
        ),
    ],
)
def test_the_body_says_when_it_was_due_how_late_and_what_was_missed(
    delivered: str | None, missed: int, body: str
) -> None:
    assert alert(deliveredAt=delivered, missed=missed)["body"] == body
    assert OVERDUE_AFTER_MS == 60_000  # the card's rule (schedule-card.js) is the same
    assert COUNT_CAP == 100_000  # the card's MISSED_CAP (schedule-card.js) is the same


def test_a_zone_this_host_does_not_know_says_the_utc_time_and_a_long_prompt_is_cut() -> None:
    assert alert(timeZone="Mars/Olympus")["body"] == "Due at 2026-03-30T07:00:00.000Z"
    title = alert(prompt="x" * 500)["title"]
    assert isinstance(title, str) and len(title) == 200 and title.endswith("…")


async def test_every_delivered_reminder_is_an_alert_and_nothing_else_is(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    await pass_time(harness, 15)
    session = agent.session
    dispatch = dispatches(session)[0]

    answers = {
        event.seq: harness.plugin.dsh_session_alert(session=session, event=event)
        for event in session.events
    }

    assert answers[dispatch.seq] == {
        "title": "stretch",
        "body": "Due at 00:00 (UTC)",
        "tag": f"{session.id}/rem-1@2026-01-01T00:00:10.000Z",
        "snooze": {
            "plugin": harness.plugin.context.name,
            "action": "snooze",
            "args": {"dispatchSeq": dispatch.seq},
        },
    }
    assert [seq for seq, answer in answers.items() if answer is not None] == [dispatch.seq]
