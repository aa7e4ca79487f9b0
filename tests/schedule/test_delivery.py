from __future__ import annotations

from dsh_tool_schedule.delivery import (
    MAX_COALESCED,
    Part,
    coalesce,
    followup_message,
    requeue_groups,
)
from dsh_tool_schedule.fold import Reminder, ScheduleFold
from dsh_tool_schedule.frame import reminder_frame
from dsh_tool_schedule.plan import Due

from .conftest import START_MS
from .logs import create2, dispatch2, every, session

MINUTE = 60_000


def reminders(count: int) -> list[Reminder]:
    entries = [
        create2(every(60, first_ms=START_MS + MINUTE, reminder_id=f"rem-{n}", prompt=f"p{n}"))
        for n in range(1, count + 1)
    ]
    return ScheduleFold.of(session(*entries)).reminders()


def test_reminders_due_in_the_same_second_are_taken_together_in_order() -> None:
    first, second, third, fourth = reminders(4)
    due = [
        (START_MS + 1_500, 3, third),
        (START_MS + 1_000, 1, second),
        (START_MS + 1_999, 0, first),
        (START_MS + 2_000, 4, fourth),
    ]
    assert [item.id for item in coalesce(due)] == ["rem-2", "rem-3", "rem-1"]


def test_at_most_max_coalesced_are_taken() -> None:
    many = reminders(MAX_COALESCED + 5)
    due = [(START_MS, seq, reminder) for seq, reminder in enumerate(many)]
    taken = coalesce(due)
    assert len(taken) == MAX_COALESCED
    assert taken[0].id == "rem-1"


def test_one_part_is_exactly_its_frame_and_source() -> None:
    [reminder] = reminders(1)
    due = Due(START_MS + MINUTE, 0)
    text, source = followup_message(
        [Part(reminder, due, None, 7)], START_MS + MINUTE, fires_when_closed=False
    )
    assert text == reminder_frame(reminder, due, START_MS + MINUTE, None)
    assert source == {
        "kind": "schedule",
        "scheduleId": "rem-1",
        "occurrenceAt": "2026-01-01T00:01:00.000Z",
        "missed": 0,
        "dispatchSeq": 7,
    }


def test_several_parts_are_one_message_naming_every_dispatch() -> None:
    first, second = reminders(2)
    due = Due(START_MS + MINUTE, 2)
    parts = [Part(first, due, None, 7), Part(second, due, START_MS + 2 * MINUTE, 8)]
    text, source = followup_message(parts, START_MS + MINUTE, fires_when_closed=True)
    frames = text.split("\n\n")
    assert frames == [
        reminder_frame(first, due, START_MS + MINUTE, None, fires_when_closed=True),
        reminder_frame(
            second, due, START_MS + MINUTE, START_MS + 2 * MINUTE, fires_when_closed=True
        ),
    ]
    assert (source["dispatchSeq"], source["dispatchSeqs"]) == (7, [7, 8])
    assert source["scheduleIds"] == ["rem-1", "rem-2"]
    assert source["missed"] == 2


def test_consecutive_unanswered_dispatches_are_one_delivery() -> None:
    entries = [
        create2(every(60, first_ms=START_MS + MINUTE, reminder_id=f"rem-{n}")) for n in (1, 2, 3)
    ]
    entries += [dispatch2(f"rem-{n}", START_MS + MINUTE, n - 1) for n in (1, 2)]
    entries += [("message/user", {"text": "hi", "source": {"kind": "user"}})]
    entries += [dispatch2("rem-3", START_MS + MINUTE, 2)]
    items = ScheduleFold.of(session(*entries)).unanswered()
    assert [[item.seq for item in group] for group in requeue_groups(items)] == [[3, 4], [6]]
    assert requeue_groups([]) == []
