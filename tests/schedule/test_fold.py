from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_tool_schedule.cron import CronSeries
from dsh_tool_schedule.fold import ScheduleFold, following_occurrence
from dsh_tool_schedule.ids import MAX_REMINDER_NUMBER
from dsh_tool_schedule.plan import plan
from dsh_tool_schedule.timefmt import parse_timestamp
from dsh_tool_schedule.zones import load_zone

from .conftest import START_MS
from .logs import (
    Entry,
    create,
    create2,
    cron,
    delete,
    delete2,
    dispatch,
    dispatch2,
    every,
    extend,
    followup,
    fork,
    raw,
    record,
    session,
    update2,
    user,
)
from .reference import ReferenceReminder, cron_occurrences, every_occurrences

DAY = 86_400_000


def active_ids(fold: ScheduleFold) -> list[str]:
    return [item.id for item in fold.reminders()]


def error_of(*entries: Entry) -> tuple[int, str]:
    fold = ScheduleFold.of(session(*entries))
    assert fold.error is not None
    return fold.error.seq, fold.error.reason


# -- v1 logs fold as they always did --------------------------------------------------


def test_an_empty_log_has_no_reminders_and_starts_ids_at_1() -> None:
    fold = ScheduleFold.of(session())
    assert fold.reminders() == []
    assert fold.error is None
    assert fold.next_id() == "rem-1"


def test_v1_creates_are_active_after_reminders_until_deleted_or_dispatched() -> None:
    log = session(create("rem-1", 30), user(), create("rem-2", 10), create("rem-3", 20))
    fold = ScheduleFold.of(log)
    assert active_ids(fold) == ["rem-1", "rem-2", "rem-3"]
    reminder = fold.get("rem-2")
    assert reminder is not None
    assert (reminder.seq, reminder.created_seq, reminder.legacy) == (2, 2, True)
    assert reminder.next_ms == START_MS + 10_000
    assert reminder.record.rule.to_data() == {"kind": "after", "seconds": 10}
    assert (reminder.record.time_zone, reminder.record.misfire) == ("UTC", "latest")

    fold = ScheduleFold.of(extend(log, delete("rem-2"), dispatch("rem-3")))
    assert active_ids(fold) == ["rem-1"]
    assert fold.get("rem-2") is None


def test_ids_are_never_reused_and_follow_the_highest_number_seen() -> None:
    assert ScheduleFold.of(session(create("rem-1"), delete("rem-1"))).next_id() == "rem-2"
    assert ScheduleFold.of(session(create("rem-7"), create2(record("rem-3")))).next_id() == "rem-8"


def test_a_create_that_reuses_an_id_is_rejected_whatever_its_version() -> None:
    assert error_of(create("rem-1"), user(), create("rem-1")) == (
        2,
        "create reuses id rem-1 (first created at seq 0)",
    )
    assert error_of(create("rem-1"), dispatch("rem-1"), create2(record("rem-1")))[0] == 2


def test_changes_of_an_id_that_is_not_active_are_rejected() -> None:
    assert error_of(delete("rem-1")) == (0, "delete of rem-1, which is never created in this fold")
    assert error_of(create("rem-1"), delete("rem-1"), dispatch("rem-1")) == (
        2,
        "dispatch of rem-1, which is already finished",
    )
    assert error_of(update2(record(revision=2)))[1] == (
        "update of rem-1, which is never created in this fold"
    )
    assert error_of(create2(record()), delete2("rem-1"), delete2("rem-1"))[0] == 2


def test_a_payload_the_decoder_rejects_stops_the_fold_with_its_seq_and_reason() -> None:
    seq, reason = error_of(create("rem-1"), raw({"version": 3, "change": "delete"}))
    assert seq == 1
    assert reason.startswith("invalid schedule/change: version")


def test_a_rejected_fold_stays_rejected_and_ignores_what_follows() -> None:
    log = session(create("rem-1"), delete("rem-9"))
    fold = ScheduleFold.of(log)
    error = fold.error
    fold.advance(extend(log, create("rem-2"), delete("rem-1")))
    assert fold.error == error
    assert active_ids(fold) == ["rem-1"]
    assert fold.position == 4


def test_other_event_types_are_skipped_even_when_they_look_like_schedule_data() -> None:
    log = session(("note/change", {"version": 1, "change": "delete", "id": "rem-1"}), user())
    fold = ScheduleFold.of(log)
    assert fold.error is None
    assert fold.position == 2


def test_a_fork_folds_only_its_own_suffix_and_cannot_finish_what_it_inherited() -> None:
    parent = session(create("rem-1"), create2(record("rem-2")), user())
    child = fork(parent, "child")
    fold = ScheduleFold.of(child)
    assert fold.reminders() == []
    assert fold.next_id() == "rem-1"
    assert ScheduleFold.of(extend(child, create2(record("rem-1")))).next_id() == "rem-2"
    orphan = ScheduleFold.of(extend(child, dispatch2("rem-2", START_MS + 10_000, 1)))
    assert orphan.error is not None
    assert "never created in this fold" in orphan.error.reason


def test_a_resumed_session_folds_its_whole_log_across_end_seed_markers() -> None:
    log = session(create("rem-1"), ("session/end-seed", {}), create2(record("rem-2")))
    assert active_ids(ScheduleFold.of(log)) == ["rem-1", "rem-2"]


def test_next_id_fails_once_every_number_is_taken() -> None:
    fold = ScheduleFold.of(session(create(f"rem-{MAX_REMINDER_NUMBER}")))
    with pytest.raises(ValueError, match="outside"):
        fold.next_id()


def test_advancing_with_no_new_events_changes_nothing_and_a_stop_bounds_the_read() -> None:
    log = session(create("rem-1"), create("rem-2"))
    fold = ScheduleFold.of(log, stop=1)
    assert (active_ids(fold), fold.position) == (["rem-1"], 1)
    assert fold.advance(log) is fold
    assert (active_ids(fold), fold.position) == (["rem-1", "rem-2"], 2)
    assert fold.advance(log, stop=1).position == 2


# -- v2: updates, dispatches, recurrence ---------------------------------------------------


def test_a_v2_one_shot_finishes_with_its_dispatch() -> None:
    log = session(create2(record()), dispatch2("rem-1", START_MS + 10_000, 0))
    assert ScheduleFold.of(log).reminders() == []


def test_a_v2_dispatch_of_a_v1_record_is_read_and_a_v1_dispatch_of_a_v2_one_is_not() -> None:
    assert ScheduleFold.of(session(create("rem-1"), dispatch2("rem-1", 0, 0))).reminders() == []
    assert error_of(create2(record()), dispatch("rem-1")) == (
        1,
        "dispatch of rem-1 is version 1, but its record is version 2",
    )


def test_a_recurring_record_owes_its_next_occurrence_after_each_dispatch() -> None:
    anchor = START_MS + 60_000
    log = session(create2(every(60, first_ms=anchor)), dispatch2("rem-1", anchor, 0))
    reminder = ScheduleFold.of(log).get("rem-1")
    assert reminder is not None
    assert (reminder.delivered, reminder.last_ms, reminder.next_ms) == (1, anchor, anchor + 60_000)
    # A catch-up delivers the latest of several and owes the one after it.
    log = extend(log, dispatch2("rem-1", anchor + 300_000, 0, missed=4))
    reminder = ScheduleFold.of(log).get("rem-1")
    assert reminder is not None
    assert (reminder.delivered, reminder.next_ms) == (2, anchor + 360_000)


def test_count_and_until_finish_a_recurring_record() -> None:
    anchor = START_MS + 60_000
    counted = every(60, first_ms=anchor, count=2)
    log = session(create2(counted), dispatch2("rem-1", anchor, 0))
    assert active_ids(ScheduleFold.of(log)) == ["rem-1"]
    assert ScheduleFold.of(extend(log, dispatch2("rem-1", anchor + 60_000, 0))).reminders() == []
    bounded = every(60, first_ms=anchor, until_ms=anchor + 90_000)
    log = session(create2(bounded), dispatch2("rem-1", anchor, 0))
    assert active_ids(ScheduleFold.of(log)) == ["rem-1"]
    assert ScheduleFold.of(extend(log, dispatch2("rem-1", anchor + 60_000, 0))).reminders() == []


def test_a_change_after_the_rules_last_occurrence_finds_the_reminder_finished() -> None:
    anchor = START_MS + 60_000
    bounded = every(60, first_ms=anchor, until_ms=anchor + 90_000)
    # The occurrence after anchor + 60 s is after `until`: that dispatch finished the reminder.
    delivered = [
        create2(bounded),
        dispatch2("rem-1", anchor, 0),
        dispatch2("rem-1", anchor + 60_000, 0),
    ]
    for late, change in [
        (dispatch2("rem-1", anchor + 120_000, 0), "dispatch"),
        (update2({**bounded, "revision": 2}), "update"),
        (delete2("rem-1"), "delete"),
    ]:
        assert error_of(*delivered, late) == (3, f"{change} of rem-1, which is already finished")
    nine = START_MS + 9 * 3_600_000
    daily = create2(cron("0 9 * * *", nine, until_ms=nine + DAY + 1))
    log = session(daily, dispatch2("rem-1", nine, 0), dispatch2("rem-1", nine + DAY, 0))
    assert ScheduleFold.of(log).reminders() == []
    assert error_of(
        daily,
        dispatch2("rem-1", nine, 0),
        dispatch2("rem-1", nine + DAY, 0),
        dispatch2("rem-1", nine + 2 * DAY, 0),
    ) == (
        3,
        "dispatch of rem-1, which is already finished",
    )


def test_a_dispatch_of_an_instant_off_the_rule_is_accepted_while_one_is_owed() -> None:
    anchor = START_MS + 60_000
    log = session(
        create2(every(60, first_ms=anchor)),
        dispatch2("rem-1", anchor, 0),
        dispatch2("rem-1", anchor + 90_000, 0),
    )
    reminder = ScheduleFold.of(log).get("rem-1")
    assert reminder is not None and (reminder.delivered, reminder.next_ms) == (2, anchor + 120_000)


def test_the_fold_looks_up_a_rules_next_occurrence_only_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    walked: list[int] = []
    walk = CronSeries.next_after

    def counted(series: CronSeries, epoch_ms: int) -> int | None:
        walked.append(epoch_ms)
        return walk(series, epoch_ms)

    monkeypatch.setattr(CronSeries, "next_after", counted)
    nine = START_MS + 9 * 3_600_000
    days = [nine + day * DAY for day in range(5)]
    log = session(create2(cron("0 9 * * *", nine)), *(dispatch2("rem-1", at, 0) for at in days))
    fold = ScheduleFold.of(log)
    assert fold.error is None and walked == []  # each dispatch's occurrence proved one was owed
    reminder = fold.get("rem-1")
    assert reminder is not None and reminder.next_ms == nine + 5 * DAY
    assert walked == [days[-1]]
    assert [item.following_ms for item in fold.unanswered()] == [*days[1:], nine + 5 * DAY]


def test_an_update_replaces_the_record_and_keeps_the_delivered_count() -> None:
    anchor = START_MS + 60_000
    log = session(
        create2(every(60, first_ms=anchor)),
        dispatch2("rem-1", anchor, 0),
        update2(every(60, first_ms=anchor, next_ms=anchor + 600_000, prompt="moved", revision=2)),
    )
    reminder = ScheduleFold.of(log).get("rem-1")
    assert reminder is not None
    assert (reminder.seq, reminder.created_seq, reminder.delivered) == (2, 0, 1)
    assert (reminder.next_ms, reminder.last_ms, reminder.legacy) == (anchor + 600_000, None, False)
    assert reminder.record.prompt == "moved"


def test_updates_must_step_the_revision_and_keep_count_above_deliveries() -> None:
    assert error_of(create2(record()), update2(record(revision=3))) == (
        1,
        "update of rem-1 has revision 3; the next revision is 2",
    )
    anchor = START_MS + 60_000
    assert error_of(
        create2(every(60, first_ms=anchor)),
        dispatch2("rem-1", anchor, 0),
        update2(every(60, first_ms=anchor, count=1, revision=2)),
    ) == (2, "update of rem-1 sets count 1, but 1 occurrences were already delivered")


@pytest.mark.parametrize(
    ("entries", "problem"),
    [
        (
            [create2(every(60)), update2(every(60, revision=2)), dispatch2("rem-1", START_MS, 0)],
            "dispatch of rem-1 follows seq 0, but its current record is at seq 1",
        ),
        (
            [create2(every(60, paused=True)), dispatch2("rem-1", START_MS, 0)],
            "dispatch of rem-1 while it is paused",
        ),
        (
            [
                create2(every(60)),
                dispatch2("rem-1", START_MS + 60_000, 0),
                dispatch2("rem-1", START_MS + 60_000, 0),
            ],
            "dispatch of rem-1 repeats or precedes the occurrence already delivered "
            "(2026-01-01T00:01:00.000Z)",
        ),
    ],
)
def test_a_dispatch_must_follow_the_current_unpaused_record_and_move_forward(
    entries: list[Entry], problem: str
) -> None:
    assert error_of(*entries)[1] == problem


def test_a_cron_record_owes_its_next_wall_time_in_its_zone() -> None:
    first = parse_timestamp("2026-03-28T01:30:00.000Z")  # 02:30 CET
    log = session(
        create2(cron("30 2 * * *", first, zone="Europe/Berlin")), dispatch2("rem-1", first, 0)
    )
    reminder = ScheduleFold.of(log).get("rem-1")
    assert reminder is not None
    # The next 02:30 falls in the spring-forward gap: 03:30 CEST.
    assert reminder.next_ms == parse_timestamp("2026-03-29T01:30:00.000Z")


def test_what_a_dispatch_leads_to_is_the_same_function_the_fold_uses() -> None:
    anchor = START_MS + 60_000
    reminder = ScheduleFold.of(session(create2(every(60, first_ms=anchor, count=2)))).get("rem-1")
    assert reminder is not None
    assert following_occurrence(reminder, anchor) == anchor + 60_000
    assert following_occurrence(reminder, anchor + 600_000) == anchor + 660_000
    once = ScheduleFold.of(session(create2(record()))).get("rem-1")
    assert once is not None
    assert following_occurrence(once, START_MS + 10_000) is None


# -- properties ------------------------------------------------------------------------------

IDS = st.sampled_from(["rem-1", "rem-2", "rem-3"])
ENTRIES = st.one_of(
    st.builds(create, IDS, st.integers(1, 100)),
    st.builds(lambda rid: create2(every(60, reminder_id=rid)), IDS),
    st.builds(
        lambda rid, n: update2(every(60, reminder_id=rid, revision=n)), IDS, st.integers(2, 3)
    ),
    st.builds(delete, IDS),
    st.builds(delete2, IDS),
    st.builds(dispatch, IDS),
    st.builds(
        lambda rid, k, seq: dispatch2(rid, START_MS + 60_000 * k, seq),
        IDS,
        st.integers(1, 5),
        st.integers(0, 5),
    ),
    st.just(user()),
    st.builds(followup, st.integers(0, 30)),
    st.builds(lambda a, b: followup(a, b), st.integers(0, 30), st.integers(0, 30)),
    st.just(raw({"version": 2, "change": "nope"})),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(ENTRIES, max_size=30), st.lists(st.integers(0, 30), max_size=6))
def test_an_incremental_fold_equals_a_fold_from_scratch(
    entries: list[Entry], cuts: list[int]
) -> None:
    full = session(*entries)
    incremental = ScheduleFold(full.fold_start)
    for cut in sorted(cuts):
        incremental.advance(session(*entries[: min(cut, len(entries))]))
    incremental.advance(full)
    scratch = ScheduleFold.of(full)
    assert incremental.reminders() == scratch.reminders()
    assert incremental.error == scratch.error
    assert incremental.position == scratch.position == len(full)
    assert incremental.unanswered() == scratch.unanswered()
    if scratch.error is None:
        assert incremental.next_id() == scratch.next_id()


GRACE_MS = 300_000
CRON_RULES = ["0 * * * *", "30 2 * * *", "*/20 1-3 * * *", "15,45 */2 * * MON-FRI", "0 9 * * *"]
TRANSITION_DAYS = [
    ("Europe/Berlin", "2026-03-28T00:00:00.000Z"),
    ("Europe/Berlin", "2026-10-24T00:00:00.000Z"),
    ("America/New_York", "2026-03-07T05:00:00.000Z"),
    ("America/New_York", "2026-10-31T04:00:00.000Z"),
    ("Australia/Lord_Howe", "2026-04-03T13:00:00.000Z"),
    ("Australia/Lord_Howe", "2026-10-02T13:00:00.000Z"),
    ("Asia/Kolkata", "2026-03-28T00:00:00.000Z"),
]


@st.composite
def histories(draw: st.DrawFn) -> dict[str, Any]:
    zone, day = draw(st.sampled_from(TRANSITION_DAYS))
    start = parse_timestamp(day) + draw(st.integers(0, 12 * 3600)) * 1000
    kind = draw(st.sampled_from(["cron", "every"]))
    rule: dict[str, Any]
    if kind == "cron":
        rule = {"kind": "cron", "cron": draw(st.sampled_from(CRON_RULES))}
    else:
        rule = {"kind": "every", "seconds": draw(st.sampled_from([600, 3600, 5400, 86_400]))}
    # When the agent looked: at the occurrence owed plus a little (a live owner,
    # maybe busy), or after a gap of up to a day and a half (a cold Session
    # resumed), so some looks find many missed occurrences.
    look = st.one_of(
        st.tuples(st.just("owed"), st.integers(0, 2 * GRACE_MS // 1000)),
        st.tuples(st.just("jump"), st.integers(1, 36 * 3600)),
    )
    looks = draw(st.lists(look, min_size=1, max_size=14))
    return {
        "zone": zone,
        "start": start,
        "rule": rule,
        "misfire": draw(st.sampled_from(["latest", "skip"])),
        "count": draw(st.one_of(st.none(), st.integers(1, 6))),
        "until": draw(st.one_of(st.none(), st.integers(3600, 3 * 86_400))),
        "looks": looks,
    }


@settings(max_examples=120, deadline=None)
@given(histories())
def test_the_fold_and_plan_deliver_like_the_reference_over_random_histories(
    history: dict[str, Any],
) -> None:
    zone = load_zone(history["zone"])
    start: int = history["start"]
    rule = history["rule"]
    # Room for every look, and for each "owed" look to wait a whole day for its occurrence.
    horizon = start + sum(seconds for _, seconds in history["looks"]) * 1000 + 16 * 86_400_000
    if rule["kind"] == "cron":
        occurrences = cron_occurrences(rule["cron"], zone, start + 1, horizon)
    else:
        period = rule["seconds"] * 1000
        occurrences = every_occurrences(start + period, period, start + 1, horizon)
    first = occurrences[0]
    until = None if history["until"] is None else first + history["until"] * 1000
    data = record(
        rule=rule,
        zone=history["zone"],
        first_ms=first,
        until_ms=until,
        count=history["count"],
        misfire=history["misfire"],
    )
    reference = ReferenceReminder(
        occurrences=occurrences,
        owed=first,
        misfire=history["misfire"],
        grace_ms=GRACE_MS,
        count=history["count"],
        until=until,
    )
    log = session(create2(data))
    fold = ScheduleFold.of(log)
    now = start
    for how, seconds in history["looks"]:
        now = max(now, reference.owed) + seconds * 1000 if how == "owed" else now + seconds * 1000
        reminder = fold.get("rem-1")
        assert (reminder is None) == reference.finished
        if reminder is None:
            break
        assert reminder.next_ms == reference.owed
        assert reminder.delivered == reference.delivered
        expected = reference.due(now)
        planned = plan(reminder, now, grace_ms=GRACE_MS)
        got = None if planned.due is None else (planned.due.occurrence_ms, planned.due.missed)
        assert got == expected
        if expected is None:
            ahead = planned.next_ms
            assert planned.state == "scheduled"
            if ahead is not None:
                assert ahead > now
            continue
        occurrence, missed = expected
        reference.deliver(occurrence, missed)
        log = extend(log, dispatch2("rem-1", occurrence, reminder.seq, missed))
        fold.advance(log)
        assert fold.error is None
        assert ScheduleFold.of(log).reminders() == fold.reminders()


def test_a_copy_advances_on_its_own() -> None:
    log = session(create2(every(60)), create("rem-2"))
    fold = ScheduleFold.of(log)
    twin = fold.copy()
    twin.advance(extend(log, delete("rem-2"), delete2("rem-1"), create("rem-3"), delete("rem-9")))
    assert active_ids(fold) == ["rem-1", "rem-2"] and fold.position == 2
    assert active_ids(twin) == ["rem-3"] and twin.error is not None
    assert fold.error is None and (fold.next_id(), twin.next_id()) == ("rem-3", "rem-4")
    assert fold.get("rem-1") is fold.get("rem-1")  # built once per state
