from __future__ import annotations

from collections.abc import Collection, Iterator

import pytest

from dsh.session import Session, SessionEvent, SessionLog
from dsh_tool_schedule.presentation import schedule_reminder_presentation

from .conftest import dispatches
from .logs import create, delete, dispatch, extend, fork, raw, resume, session, user


def receipt(
    prompt: str, at: str = "2026-01-01T00:00:10.000Z", rid: str = "rem-1"
) -> dict[str, str]:
    return {
        "scheduleId": rid,
        "prompt": prompt,
        "occurrenceAt": at,
        "deliveryMode": "session-local",
    }


def test_a_dispatch_pairs_with_its_create() -> None:
    log = session(create("rem-1", prompt="stretch"), user(), dispatch("rem-1"))
    assert schedule_reminder_presentation(log, 2) == receipt("stretch")


def test_the_receipt_carries_the_records_target_as_the_occurrence() -> None:
    log = session(create("rem-1", 3600, prompt="tea"), dispatch("rem-1"))
    assert schedule_reminder_presentation(log, 1) == receipt("tea", "2026-01-01T01:00:00.000Z")


@pytest.mark.parametrize("seq", [-1, 0, 1, 2, 3, 4, 99])
def test_anything_but_a_valid_paired_dispatch_has_no_receipt(seq: int) -> None:
    log = session(
        create("rem-1"),
        delete("rem-1"),
        user(),
        raw({"version": 1, "change": "dispatch", "id": "rem-1", "extra": 1}),
        ("other/event", {"version": 1, "change": "dispatch", "id": "rem-1"}),
    )
    assert schedule_reminder_presentation(log, seq) is None


def test_a_dispatch_with_no_create_before_it_has_no_receipt() -> None:
    log = session(dispatch("rem-1"), create("rem-1"))
    assert schedule_reminder_presentation(log, 0) is None


def test_malformed_creates_are_skipped_while_pairing() -> None:
    bad = raw({"version": 1, "change": "create", "record": {"id": "rem-1"}})
    log = session(create("rem-1", prompt="good"), bad, dispatch("rem-1"))
    assert schedule_reminder_presentation(log, 2) == receipt("good")


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


def test_each_generation_of_a_fork_of_a_fork_pairs_its_own_reused_id() -> None:
    first = session(create("rem-1", prompt="gen 0"), dispatch("rem-1"))
    second = extend(fork(first, "gen1"), create("rem-1", prompt="gen 1"), dispatch("rem-1"))
    third = extend(fork(second, "gen2"), create("rem-1", prompt="gen 2"), dispatch("rem-1"))
    receipts = {
        event.seq: schedule_reminder_presentation(third, event.seq) for event in dispatches(third)
    }
    assert receipts == {
        1: receipt("gen 0"),
        4: receipt("gen 1"),
        7: receipt("gen 2"),
    }
    assert third.fold_start == 6


def test_a_dispatch_after_a_resume_pairs_with_a_create_from_an_earlier_lifecycle() -> None:
    stored = session(create("rem-1", prompt="before restart"))
    live = extend(resume(stored, at_ms=0), dispatch("rem-1"))
    assert schedule_reminder_presentation(live, 2) == receipt("before restart")


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
    assert reading.read == [len(log) - 1, len(log) - 3]
