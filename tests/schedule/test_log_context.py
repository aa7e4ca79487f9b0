from __future__ import annotations

from dsh_tool_schedule.log_context import creates_this_turn, user_zone

from .logs import create, create2, fork, record, session, user


def test_the_zone_is_the_latest_one_a_person_wrote_from() -> None:
    assert user_zone(session()) == "UTC"
    assert user_zone(session(user())) == "UTC"
    log = session(
        user(zone="Asia/Kolkata"),
        user(zone="Europe/Berlin"),
        user("a reminder", kind="schedule"),  # a follow-up names no zone
    )
    assert user_zone(log) == "Europe/Berlin"


def test_malformed_messages_and_unknown_zones_are_passed_over() -> None:
    log = session(
        user(zone="America/New_York"),
        ("message/user", {"text": 5, "source": {"kind": "user"}}),
        user(zone="Mars/Olympus"),
    )
    assert user_zone(log) == "America/New_York"


def test_a_fork_still_knows_the_zone_of_its_inherited_messages() -> None:
    assert user_zone(fork(session(user(zone="Australia/Lord_Howe")), "child")) == (
        "Australia/Lord_Howe"
    )


def test_creates_are_counted_since_the_latest_message() -> None:
    assert creates_this_turn(session()) == 0
    assert creates_this_turn(session(create("rem-1"), create2(record("rem-2")))) == 2
    log = session(create("rem-1"), user(), create("rem-2"), ("schedule/change", []))
    assert creates_this_turn(log) == 1
    assert creates_this_turn(session(create("rem-1"), user())) == 0


def test_a_fork_counts_only_its_own_creates() -> None:
    child = fork(session(create("rem-1"), create("rem-2")), "child")
    assert creates_this_turn(child) == 0
