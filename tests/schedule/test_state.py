from __future__ import annotations

from dsh_tool_schedule.state import as_of, session_state, session_wake_at

from .conftest import START_MS
from .logs import create, create2, dispatch2, every, followup, raw, record, session, user

MINUTE = 60_000
GRACE = 5 * MINUTE


def test_the_state_lists_active_reminders_from_the_log() -> None:
    log = session(create("rem-1", 30), create2(every(60, reminder_id="rem-2", paused=True)))
    state = session_state(log, grace_ms=GRACE)
    reminders = state["reminders"]
    assert isinstance(reminders, list)
    assert [(view["id"], view["state"]) for view in reminders] == [  # type: ignore[index,call-overload]
        ("rem-1", "scheduled"),
        ("rem-2", "paused"),
    ]
    assert "error" not in state


def test_a_rejected_log_still_lists_what_came_before_with_the_error() -> None:
    log = session(create("rem-1", 30), raw({"version": 2, "change": "nope"}), create("rem-2"))
    state = session_state(log, grace_ms=GRACE)
    assert [view["id"] for view in state["reminders"]] == ["rem-1"]  # type: ignore[index,union-attr]
    error = state["error"]
    assert isinstance(error, dict)
    assert (error["code"], error["seq"]) == ("schedule_log_invalid", 1)
    assert "none of its reminders is delivered" in str(error["message"])


def test_expired_reminders_are_not_listed() -> None:
    expired = every(60, misfire="skip", until_ms=START_MS + 3 * MINUTE)
    state = session_state(session(create2(expired)), grace_ms=GRACE, now_ms=START_MS + 60 * MINUTE)
    assert state == {"reminders": []}


def test_the_state_is_planned_as_of_the_last_event_unless_a_time_is_given() -> None:
    tea = create("rem-1", 30)  # due at START_MS + 30 s
    before = session(tea, time=START_MS)
    after = session(tea, user(), time=START_MS + 31_000)

    def states(log: object, **now: int) -> list[object]:
        found = session_state(log, grace_ms=GRACE, **now)  # type: ignore[arg-type]
        return [view["state"] for view in found["reminders"]]  # type: ignore[index,union-attr]

    assert (as_of(before), as_of(after)) == (START_MS, START_MS + 31_000)
    assert states(before) == ["scheduled"]
    assert states(after) == ["overdue"]
    assert states(before, now_ms=START_MS + 31_000) == ["overdue"]
    # The same log answers the same state whenever it is read: no clock is involved.
    assert session_state(before, grace_ms=GRACE) == session_state(before, grace_ms=GRACE)


def test_an_empty_log_speaks_for_its_creation_time() -> None:
    empty = session()
    assert as_of(empty) == empty.header.created_at
    assert session_state(empty, grace_ms=GRACE) == {"reminders": []}


def test_the_wake_time_is_the_earliest_owed_occurrence_of_unpaused_reminders() -> None:
    assert session_wake_at(session(), grace_ms=GRACE) is None
    assert session_wake_at(session(user()), grace_ms=GRACE) is None
    log = session(
        create("rem-1", 300),
        create2(every(60, reminder_id="rem-2", paused=True)),
        create2(record("rem-3", first_ms=START_MS + 120_000)),
    )
    assert session_wake_at(log, grace_ms=GRACE) == START_MS + 120_000
    broken = session(create("rem-1", 300), raw({"version": 9}))
    assert session_wake_at(broken, grace_ms=GRACE) is None


def test_a_latest_reminder_wakes_at_its_owed_occurrence_even_if_long_past() -> None:
    log = session(create2(every(3600, first_ms=START_MS + MINUTE)), time=START_MS + 86_400_000)
    assert session_wake_at(log, grace_ms=GRACE) == START_MS + MINUTE


def test_a_skip_reminder_wakes_for_the_first_occurrence_it_could_still_deliver() -> None:
    hourly = every(3600, first_ms=START_MS + MINUTE, misfire="skip")
    closed = START_MS + 10 * 3_600_000  # the log's last event: the Session was live until then
    log = session(create2(hourly), time=closed)
    # 09:01 is more than the grace before the close; 10:01 is the first that may still be due.
    assert session_wake_at(log, grace_ms=GRACE) == START_MS + MINUTE + 10 * 3_600_000
    recent = session(create2(hourly), time=START_MS + 2 * MINUTE)
    assert session_wake_at(recent, grace_ms=GRACE) == START_MS + MINUTE
    done = every(3600, first_ms=START_MS + MINUTE, misfire="skip", until_ms=START_MS + MINUTE)
    assert session_wake_at(session(create2(done), time=closed), grace_ms=GRACE) is None
    later = session(
        create2(hourly), dispatch2("rem-1", START_MS + MINUTE, 0), followup(1), time=closed
    )
    assert session_wake_at(later, grace_ms=GRACE) == START_MS + MINUTE + 10 * 3_600_000


def test_a_dispatch_without_its_followup_needs_the_session_live_at_once() -> None:
    closed = START_MS + 10 * MINUTE
    hourly = every(3600, first_ms=START_MS + MINUTE)
    lost = session(create2(hourly), dispatch2("rem-1", START_MS + MINUTE, 0), time=closed)
    assert session_wake_at(lost, grace_ms=GRACE) == closed
    stored = session(
        create2(hourly), dispatch2("rem-1", START_MS + MINUTE, 0), followup(1), time=closed
    )
    assert session_wake_at(stored, grace_ms=GRACE) == START_MS + MINUTE + 3_600_000
