from __future__ import annotations

from collections.abc import Collection, Iterator

from dsh.session.event import SessionEvent
from dsh.session.log import Session
from dsh_tool_schedule.fold import ScheduleFold
from dsh_tool_schedule.followups import answered_seqs

from .conftest import START_MS
from .logs import create, create2, dispatch, dispatch2, every, followup, fork, session, user

MINUTE = 60_000


def unanswered(log: Session) -> list[int]:
    return [item.seq for item in ScheduleFold.of(log).unanswered()]


def test_a_v2_dispatch_is_unanswered_until_its_followup_is_stored() -> None:
    hourly = create2(every(3600, first_ms=START_MS + MINUTE))
    log = session(hourly, dispatch2("rem-1", START_MS + MINUTE, 0, missed=2))
    [item] = ScheduleFold.of(log).unanswered()
    assert (item.seq, item.reminder_id, item.occurrence_ms, item.missed) == (
        1,
        "rem-1",
        START_MS + MINUTE,
        2,
    )
    assert item.following_ms == START_MS + MINUTE + 3_600_000
    assert item.record().prompt == "stretch"
    answered = session(hourly, dispatch2("rem-1", START_MS + MINUTE, 0), user(), followup(1))
    assert unanswered(answered) == []


def test_the_last_occurrence_owes_nothing_after_it() -> None:
    once = create2(every(60, first_ms=START_MS + MINUTE, count=1))
    [item] = ScheduleFold.of(session(once, dispatch2("rem-1", START_MS + MINUTE, 0))).unanswered()
    assert item.following_ms is None


def test_a_coalesced_followup_answers_every_dispatch_it_names() -> None:
    first = create2(every(60, first_ms=START_MS + MINUTE))
    second = create2(every(60, first_ms=START_MS + MINUTE, reminder_id="rem-2"))
    third = create2(every(60, first_ms=START_MS + MINUTE, reminder_id="rem-3"))
    log = session(
        first,
        second,
        third,
        dispatch2("rem-1", START_MS + MINUTE, 0),
        dispatch2("rem-2", START_MS + MINUTE, 1),
        dispatch2("rem-3", START_MS + MINUTE, 2),
        followup(3, 5),
    )
    assert unanswered(log) == [4]


def test_only_a_later_schedule_message_naming_the_dispatch_answers_it() -> None:
    hourly = create2(every(3600, first_ms=START_MS + MINUTE))
    early = followup(2)  # at seq 1, before the dispatch it names
    assert unanswered(session(hourly, early, dispatch2("rem-1", START_MS + MINUTE, 0))) == [2]
    base = [hourly, dispatch2("rem-1", START_MS + MINUTE, 0)]
    assert unanswered(session(*base, user(kind="other"))) == [1]
    assert unanswered(session(*base, followup(7))) == [1]


def test_sources_that_name_no_dispatch_answer_nothing() -> None:
    assert answered_seqs("text") == []
    assert answered_seqs({"source": "schedule"}) == []
    assert answered_seqs({"source": {"kind": "user", "dispatchSeq": 1}}) == []
    assert answered_seqs({"source": {"kind": "schedule"}}) == []
    assert answered_seqs({"source": {"kind": "schedule", "dispatchSeq": True}}) == []
    assert answered_seqs({"source": {"kind": "schedule", "dispatchSeqs": 3}}) == []
    named = {"kind": "schedule", "dispatchSeq": 1, "dispatchSeqs": [1, "2", 3]}
    assert answered_seqs({"source": named}) == [1, 3]


def test_v1_dispatches_are_not_tracked() -> None:
    assert unanswered(session(create("rem-1", 10), dispatch("rem-1"))) == []


def test_a_fork_tracks_only_its_own_dispatches() -> None:
    hourly = create2(every(3600, first_ms=START_MS + MINUTE))
    parent = session(hourly, dispatch2("rem-1", START_MS + MINUTE, 0))
    assert unanswered(parent) == [1]
    assert unanswered(fork(parent, "child")) == []


class CountingLog:
    """A log that records the seqs each `message/user` scan yields."""

    def __init__(self, log: Session) -> None:
        self.log = log
        self.read: list[int] = []

    @property
    def fold_start(self) -> int:
        return self.log.fold_start

    def __len__(self) -> int:
        return len(self.log)

    def scan(
        self, start: int = 0, stop: int | None = None, *, types: Collection[str] | None = None
    ) -> Iterator[SessionEvent]:
        for event in self.log.scan(start, stop, types=types):
            if event.type == "message/user":
                self.read.append(event.seq)
            yield event


def test_messages_are_read_only_from_the_earliest_unanswered_dispatch_and_each_once() -> None:
    hourly = create2(every(3600, first_ms=START_MS + MINUTE))
    entries = [user(), user(), hourly, user(), dispatch2("rem-1", START_MS + MINUTE, 2)]
    entries += [user(), followup(4), user(), user()]
    counting = CountingLog(session(*entries))
    fold = ScheduleFold(0).advance(counting)  # type: ignore[arg-type]
    assert fold.unanswered() == []
    assert counting.read == [5, 6]  # from the dispatch on, and no further once it is answered
    grown = CountingLog(session(*entries, dispatch2("rem-1", START_MS + 2 * MINUTE, 2), user()))
    fold.advance(grown)  # type: ignore[arg-type]
    assert grown.read == [10]
    assert [item.seq for item in fold.unanswered()] == [9]


def test_a_copy_advances_on_its_own() -> None:
    hourly = create2(every(3600, first_ms=START_MS + MINUTE))
    base = session(hourly, dispatch2("rem-1", START_MS + MINUTE, 0))
    fold = ScheduleFold.of(base)
    twin = fold.copy()
    twin.advance(session(hourly, dispatch2("rem-1", START_MS + MINUTE, 0), followup(1)))
    assert [item.seq for item in fold.unanswered()] == [1]
    assert twin.unanswered() == []
