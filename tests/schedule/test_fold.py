from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_tool_schedule.fold import ScheduleFold
from dsh_tool_schedule.ids import MAX_REMINDER_NUMBER

from .conftest import START_MS
from .logs import Entry, create, delete, dispatch, extend, fork, raw, session, user


def active_ids(fold: ScheduleFold) -> list[str]:
    return [item.id for item in fold.reminders()]


def test_an_empty_log_has_no_reminders_and_starts_ids_at_1() -> None:
    fold = ScheduleFold.of(session())
    assert fold.reminders() == []
    assert fold.earliest() is None
    assert fold.error is None
    assert fold.next_id() == "rem-1"


def test_creates_are_active_in_creation_order_until_deleted_or_dispatched() -> None:
    log = session(create("rem-1", 30), user(), create("rem-2", 10), create("rem-3", 20))
    fold = ScheduleFold.of(log)
    assert active_ids(fold) == ["rem-1", "rem-2", "rem-3"]
    reminder = fold.get("rem-2")
    assert reminder is not None
    assert reminder.seq == 2
    assert reminder.due_ms == START_MS + 10_000
    assert reminder.record.prompt == "stretch"

    fold = ScheduleFold.of(extend(log, delete("rem-2"), dispatch("rem-3")))
    assert active_ids(fold) == ["rem-1"]
    assert fold.get("rem-2") is None
    assert fold.error is None


def test_ids_are_never_reused_after_a_reminder_finishes() -> None:
    fold = ScheduleFold.of(session(create("rem-1"), delete("rem-1")))
    assert fold.reminders() == []
    assert fold.next_id() == "rem-2"


def test_the_next_id_follows_the_highest_number_seen() -> None:
    fold = ScheduleFold.of(session(create("rem-7"), create("rem-3")))
    assert fold.next_id() == "rem-8"


def test_the_earliest_target_wins_and_the_earlier_create_breaks_a_tie() -> None:
    fold = ScheduleFold.of(session(create("rem-1", 30), create("rem-2", 10), create("rem-3", 10)))
    earliest = fold.earliest()
    assert earliest is not None
    assert earliest.id == "rem-2"


def test_a_create_that_reuses_an_active_or_finished_id_is_rejected() -> None:
    fold = ScheduleFold.of(session(create("rem-1"), user(), create("rem-1")))
    assert fold.error is not None
    assert fold.error.seq == 2
    assert fold.error.reason == "create reuses id rem-1 (first created at seq 0)"

    fold = ScheduleFold.of(session(create("rem-1"), dispatch("rem-1"), create("rem-1")))
    assert fold.error is not None
    assert fold.error.seq == 2


def test_delete_or_dispatch_of_an_id_that_is_not_active_is_rejected() -> None:
    fold = ScheduleFold.of(session(delete("rem-1")))
    assert fold.error is not None
    assert (fold.error.seq, fold.error.reason) == (
        0,
        "delete of rem-1, which is never created in this fold",
    )
    fold = ScheduleFold.of(session(create("rem-1"), delete("rem-1"), dispatch("rem-1")))
    assert fold.error is not None
    assert (fold.error.seq, fold.error.reason) == (
        2,
        "dispatch of rem-1, which is already finished",
    )


def test_a_payload_the_decoder_rejects_stops_the_fold_with_its_seq_and_reason() -> None:
    fold = ScheduleFold.of(session(create("rem-1"), raw({"version": 2, "change": "delete"})))
    assert fold.error is not None
    assert fold.error.seq == 1
    assert fold.error.reason.startswith("invalid schedule/change: ")
    assert "version" in fold.error.reason


def test_a_rejected_fold_stays_rejected_and_ignores_what_follows() -> None:
    log = session(create("rem-1"), delete("rem-9"))
    fold = ScheduleFold.of(log)
    error = fold.error
    fold.advance(extend(log, create("rem-2"), delete("rem-1")).events)
    assert fold.error == error
    assert active_ids(fold) == ["rem-1"]
    assert fold.position == 4


def test_other_event_types_are_skipped_even_when_they_look_like_schedule_data() -> None:
    log = session(("note/change", {"version": 1, "change": "delete", "id": "rem-1"}), user())
    fold = ScheduleFold.of(log)
    assert fold.error is None
    assert fold.position == 2


def test_a_fork_folds_only_its_own_suffix() -> None:
    parent = session(create("rem-1"), create("rem-2"), user())
    child = fork(parent, "child")
    assert child.fold_start == len(parent) + 1
    fold = ScheduleFold.of(child)
    assert fold.reminders() == []
    assert fold.next_id() == "rem-1"

    child = extend(child, create("rem-1", 5), dispatch("rem-1"), create("rem-2"))
    fold = ScheduleFold.of(child)
    assert fold.error is None
    assert active_ids(fold) == ["rem-2"]


def test_a_fork_cannot_finish_a_reminder_it_only_inherited() -> None:
    parent = session(create("rem-1"))
    child = extend(fork(parent, "child"), dispatch("rem-1"))
    fold = ScheduleFold.of(child)
    assert fold.error is not None
    assert fold.error.seq == 2
    assert "never created in this fold" in fold.error.reason


def test_a_resumed_session_folds_its_whole_log_across_end_seed_markers() -> None:
    log = session(create("rem-1"), ("session/end-seed", {}), create("rem-2"))
    assert active_ids(ScheduleFold.of(log)) == ["rem-1", "rem-2"]


def test_next_id_fails_once_every_number_is_taken() -> None:
    fold = ScheduleFold.of(session(create(f"rem-{MAX_REMINDER_NUMBER}")))
    with pytest.raises(ValueError, match="outside"):
        fold.next_id()


def test_advancing_with_no_new_events_changes_nothing() -> None:
    log = session(create("rem-1"))
    fold = ScheduleFold.of(log)
    assert fold.advance(log.events) is fold
    assert active_ids(fold) == ["rem-1"]
    assert fold.position == 1


ENTRIES = st.one_of(
    st.builds(create, st.sampled_from(["rem-1", "rem-2", "rem-3"]), st.integers(1, 100)),
    st.builds(delete, st.sampled_from(["rem-1", "rem-2", "rem-3"])),
    st.builds(dispatch, st.sampled_from(["rem-1", "rem-2", "rem-3"])),
    st.just(user()),
    st.just(raw({"version": 1, "change": "nope"})),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(ENTRIES, max_size=30), st.lists(st.integers(0, 30), max_size=6))
def test_an_incremental_fold_equals_a_fold_from_scratch(
    entries: list[Entry], cuts: list[int]
) -> None:
    full = session(*entries)
    incremental = ScheduleFold(full.fold_start)
    for cut in sorted(cuts):
        incremental.advance(full.events[: min(cut, len(full))])
    incremental.advance(full.events)
    scratch = ScheduleFold.of(full)
    assert incremental.reminders() == scratch.reminders()
    assert incremental.error == scratch.error
    assert incremental.position == scratch.position == len(full)
    if scratch.error is None:
        assert incremental.next_id() == scratch.next_id()
