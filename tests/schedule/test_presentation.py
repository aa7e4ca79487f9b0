from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

import pytest

from dsh.session.event import SessionEvent
from dsh.session.header import SessionHeader
from dsh.session.log import Session, SessionLog
from dsh_tool_schedule.fold import ScheduleFold
from dsh_tool_schedule.presentation import schedule_reminder_presentation

from .conftest import START_MS, dispatches
from .logs import (
    create,
    create2,
    delete,
    delete2,
    dispatch,
    dispatch2,
    every,
    extend,
    fork,
    raw,
    record,
    resume,
    session,
    update2,
    user,
)


def receipt(
    prompt: str,
    at: str = "2026-01-01T00:00:10.000Z",
    rid: str = "rem-1",
    **fields: Any,
) -> dict[str, Any]:
    view = {
        "scheduleId": rid,
        "prompt": prompt,
        "occurrenceAt": at,
        "deliveredAt": "2026-01-01T00:00:00.000Z",
        "missed": 0,
        "rule": {"kind": "after", "seconds": 10},
        "ruleText": "once, 10 seconds after it was set",
        "timeZone": "UTC",
        "revision": 1,
        "deliveryMode": "session-local",
    }
    return {**view, **fields}


class ColdLog:
    """A `SessionLog` that is not a Session, counts its reads and cannot be held weakly."""

    __slots__ = ("_session", "reads")

    def __init__(self, session: Session) -> None:
        self._session = session
        self.reads = 0

    @property
    def header(self) -> SessionHeader:
        return self._session.header

    @property
    def id(self) -> str:
        return self._session.id

    @property
    def fold_start(self) -> int:
        return self._session.fold_start

    def __len__(self) -> int:
        return len(self._session)

    def event(self, seq: int) -> SessionEvent:
        self.reads += 1
        return self._session.event(seq)

    def scan(
        self,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
        reverse: bool = False,
    ) -> Iterator[SessionEvent]:
        for event in self._session.scan(start, stop, types=types, reverse=reverse):
            self.reads += 1
            yield event


# -- v1 dispatches ----------------------------------------------------------------------


def test_a_v1_dispatch_pairs_with_its_create() -> None:
    log = session(create("rem-1", prompt="stretch"), user(), dispatch("rem-1"))
    assert schedule_reminder_presentation(log, 2) == receipt("stretch")


def test_the_receipt_carries_the_records_target_as_the_occurrence() -> None:
    log = session(create("rem-1", 3600, prompt="tea"), dispatch("rem-1"))
    assert schedule_reminder_presentation(log, 1) == receipt(
        "tea",
        "2026-01-01T01:00:00.000Z",
        rule={"kind": "after", "seconds": 3600},
        ruleText="once, 1 hour after it was set",
    )


@pytest.mark.parametrize("seq", [-1, 0, 1, 2, 3, 4, 99])
def test_anything_but_a_valid_accepted_dispatch_has_no_receipt(seq: int) -> None:
    log = session(
        create("rem-1"),
        delete("rem-1"),
        user(),
        raw({"version": 1, "change": "dispatch", "id": "rem-1", "extra": 1}),
        ("other/event", {"version": 1, "change": "dispatch", "id": "rem-1"}),
    )
    assert schedule_reminder_presentation(log, seq) is None


def test_a_dispatch_after_a_delete_has_no_receipt() -> None:
    log = session(create("rem-1"), delete("rem-1"), dispatch("rem-1"))
    assert schedule_reminder_presentation(log, 2) is None
    log = session(create2(record()), delete2("rem-1"), dispatch2("rem-1", START_MS + 10_000, 0))
    assert schedule_reminder_presentation(log, 2) is None


def test_a_dispatch_after_any_rejected_event_has_no_receipt() -> None:
    log = session(create("rem-1"), raw({"version": 2, "change": "?"}), dispatch("rem-1"))
    assert schedule_reminder_presentation(log, 2) is None


def test_a_dispatch_with_no_create_before_it_has_no_receipt() -> None:
    log = session(dispatch("rem-1"), create("rem-1"))
    assert schedule_reminder_presentation(log, 0) is None


def test_a_childs_dispatch_pairs_only_with_a_create_in_its_own_suffix() -> None:
    parent = session(create("rem-1", prompt="parent"))
    child = fork(parent, "child")
    orphan = extend(child, dispatch("rem-1"))
    assert schedule_reminder_presentation(orphan, len(child)) is None

    owned = extend(child, create("rem-1", prompt="child"), dispatch("rem-1"))
    assert schedule_reminder_presentation(owned, len(owned) - 1) == receipt("child")


def test_an_inherited_dispatch_pairs_with_the_nearest_preceding_create() -> None:
    parent = session(create("rem-1", prompt="parent"), user(), dispatch("rem-1"))
    child = extend(fork(parent, "child"), create("rem-1", prompt="child"), dispatch("rem-1"))
    assert schedule_reminder_presentation(child, 2) == receipt("parent")
    assert schedule_reminder_presentation(child, len(child) - 1) == receipt("child")
    crowded = fork(
        session(
            create("rem-1", prompt="mine"),
            create("rem-2"),
            create2(record("rem-3")),
            dispatch("rem-1"),
        ),
        "crowded",
    )
    assert schedule_reminder_presentation(crowded, 3) == receipt("mine")
    lonely = fork(session(user(), dispatch("rem-1")), "lonely")
    assert schedule_reminder_presentation(lonely, 1) is None


def test_each_generation_of_a_fork_of_a_fork_pairs_its_own_reused_id() -> None:
    first = session(create("rem-1", prompt="gen 0"), dispatch("rem-1"))
    second = extend(fork(first, "gen1"), create("rem-1", prompt="gen 1"), dispatch("rem-1"))
    third = extend(fork(second, "gen2"), create("rem-1", prompt="gen 2"), dispatch("rem-1"))
    receipts = {
        event.seq: schedule_reminder_presentation(third, event.seq) for event in dispatches(third)
    }
    assert receipts == {1: receipt("gen 0"), 4: receipt("gen 1"), 7: receipt("gen 2")}


def test_a_dispatch_after_a_resume_pairs_with_a_create_from_an_earlier_lifecycle() -> None:
    stored = session(create("rem-1", prompt="before restart"))
    live = extend(resume(stored, at_ms=0), dispatch("rem-1"))
    assert schedule_reminder_presentation(live, 2) == receipt("before restart")


# -- v2 dispatches ----------------------------------------------------------------------------


def test_a_v2_dispatch_names_its_record_and_its_occurrence() -> None:
    anchor = START_MS + 3_600_000
    log = session(
        create2(every(3600, first_ms=anchor, zone="Europe/Berlin")),
        user(),
        dispatch2("rem-1", anchor, 0),
        dispatch2("rem-1", anchor + 3 * 3_600_000, 0, missed=2),
        time=anchor + 3 * 3_600_000 + 1500,
    )
    expected = receipt(
        "stretch",
        "2026-01-01T04:00:00.000Z",
        deliveredAt="2026-01-01T04:00:01.500Z",
        missed=2,
        rule={"kind": "every", "seconds": 3600},
        ruleText="every 1 hour",
        timeZone="Europe/Berlin",
    )
    assert schedule_reminder_presentation(log, 3) == expected


def test_a_v2_dispatch_shows_the_revision_it_followed() -> None:
    log = session(
        create2(every(60)),
        update2(every(60, prompt="renamed", revision=2)),
        dispatch2("rem-1", START_MS + 60_000, 1),
    )
    view = schedule_reminder_presentation(log, 2)
    assert view is not None
    assert (view["prompt"], view["revision"]) == ("renamed", 2)


def test_a_v2_dispatch_of_a_v1_record_reads_it_as_after() -> None:
    log = session(create("rem-1", prompt="old"), dispatch2("rem-1", START_MS + 10_000, 0))
    assert schedule_reminder_presentation(log, 1) == receipt("old")


def test_an_inherited_v2_dispatch_pairs_through_its_record_seq() -> None:
    parent = session(create2(record(prompt="parent")), dispatch2("rem-1", START_MS + 10_000, 0))
    child = extend(
        fork(parent, "child"),
        create2(record(prompt="child")),
        dispatch2("rem-1", START_MS + 10_000, 3),
    )
    assert schedule_reminder_presentation(child, 1) == receipt("parent")
    assert schedule_reminder_presentation(child, 4) == receipt("child")


@pytest.mark.parametrize(
    "record_seq",
    [1, 2, 99],  # a user message, the dispatch itself, beyond the log
)
def test_an_inherited_v2_dispatch_naming_no_record_has_no_receipt(record_seq: int) -> None:
    parent = session(create2(record()), user(), dispatch2("rem-1", START_MS + 10_000, record_seq))
    assert schedule_reminder_presentation(fork(parent, "child"), 2) is None


def test_an_inherited_v2_dispatch_naming_another_ids_record_has_no_receipt() -> None:
    parent = session(create2(record("rem-2")), dispatch2("rem-1", START_MS + 10_000, 0))
    assert schedule_reminder_presentation(fork(parent, "child"), 1) is None


def test_a_delivery_time_no_timestamp_can_spell_is_shown_as_none() -> None:
    events = [
        SessionEvent(seq=0, type="schedule/change", time=START_MS, data=create2(record())[1]),
        SessionEvent(
            seq=1,
            type="schedule/change",
            time=-(10**15),
            data=dispatch2("rem-1", START_MS + 10_000, 0)[1],
        ),
    ]
    log = Session(session().header, events)
    view = schedule_reminder_presentation(log, 1)
    assert view is not None
    assert view["deliveredAt"] is None


# -- reading a log ---------------------------------------------------------------------------


def test_a_cold_log_is_read_through_event_and_scan_only() -> None:
    log = ColdLog(session(create("rem-1"), user(), dispatch("rem-1")))
    assert schedule_reminder_presentation(log, 2) == receipt("stretch")


def test_a_fold_that_has_read_past_the_dispatch_is_reused() -> None:
    log = ColdLog(
        session(create2(record()), *[user() for _ in range(50)], dispatch2("rem-1", 0, 0))
    )
    fold = ScheduleFold.of(log)
    reads = log.reads
    assert schedule_reminder_presentation(log, 51, fold=fold) is not None
    assert log.reads - reads == 2  # the dispatch and its record, nothing else
    short = ScheduleFold.of(log, stop=10)  # has not read the dispatch: folded again
    assert schedule_reminder_presentation(log, 51, fold=short) is not None


def test_a_cold_session_built_from_storage_is_read_like_a_live_one() -> None:
    live = session(create("rem-1"), dispatch("rem-1"))
    cold = Session(live.header.model_copy(), list(live.events))
    assert schedule_reminder_presentation(cold, 1) == receipt("stretch")


class ReadingLog:
    """A `SessionLog` over a Session that records which events were handed out."""

    def __init__(self, inner: Session) -> None:
        self.inner = inner
        self.header = inner.header
        self.id = inner.id
        self.fold_start = inner.fold_start
        self.read: list[int] = []

    def __len__(self) -> int:
        return len(self.inner)

    def event(self, seq: int) -> SessionEvent:
        self.read.append(seq)
        return self.inner.event(seq)

    def scan(
        self,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
        reverse: bool = False,
    ) -> Iterator[SessionEvent]:
        for event in self.inner.scan(start, stop, types=types, reverse=reverse):
            self.read.append(event.seq)
            yield event


def test_a_receipt_reads_only_its_dispatch_and_the_schedule_events_back_to_its_create() -> None:
    many = [user(f"message {n}") for n in range(200)]
    log = session(create("rem-1", prompt="old"), *many, create("rem-2"), user(), dispatch("rem-2"))
    reading = ReadingLog(log)
    assert isinstance(reading, SessionLog)

    assert schedule_reminder_presentation(reading, len(log) - 1) == receipt("stretch", rid="rem-2")
    # The dispatch, the schedule events the acceptance fold reads, the create found
    # scanning back: never one of the 200 messages in between.
    schedule_seqs = {0, len(log) - 3, len(log) - 1}
    assert set(reading.read) == schedule_seqs
    assert reading.read[0] == len(log) - 1 and reading.read[-1] == len(log) - 3
