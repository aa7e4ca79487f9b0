from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from pydantic import JsonValue

from dsh_tool_schedule.demo.calls import (
    Context,
    change_arguments,
    first_call,
    load_zone,
    matching,
)
from dsh_tool_schedule.demo.kinds import (
    All,
    ById,
    Create,
    CreateAt,
    CreateDaily,
    CreateEvery,
    Delete,
    Intent,
    List,
    Matching,
    Move,
    SetPaused,
)

# 2026-01-01T23:30:00Z: already Friday 2 January in Tokyo, still Thursday in New York.
NOW = 1_767_310_200_000
TOKYO = Context(NOW, "Asia/Tokyo")
NEW_YORK = Context(NOW, "America/New_York")


@pytest.mark.parametrize(
    ("intent", "context", "name", "arguments"),
    [
        (
            Create("stretch", 10),
            TOKYO,
            "schedule_create",
            {"prompt": "stretch", "after_seconds": 10},
        ),
        (
            CreateAt("call mum", date(2026, 1, 3), 9, 0),
            TOKYO,
            "schedule_create",
            {"prompt": "call mum", "at": "2026-01-03T09:00", "time_zone": "Asia/Tokyo"},
        ),
        (
            CreateAt("call mum", date(2026, 1, 2), 9, 0),
            NEW_YORK,
            "schedule_create",
            {"prompt": "call mum", "at": "2026-01-02T09:00", "time_zone": "America/New_York"},
        ),
        (
            CreateAt("cook", None, 18, 5),  # at 23:30 UTC, "today at 18:05" has passed
            Context(NOW),
            "schedule_create",
            {"prompt": "cook", "at": "2026-01-02T18:05", "time_zone": "UTC"},
        ),
        (
            CreateAt("sleep", date(2026, 1, 1), 23, 45),  # still ahead today
            Context(NOW),
            "schedule_create",
            {"prompt": "sleep", "at": "2026-01-01T23:45", "time_zone": "UTC"},
        ),
        (
            CreateAt("now", date(2026, 1, 1), 23, 30),  # this very minute counts as passed
            Context(NOW),
            "schedule_create",
            {"prompt": "now", "at": "2026-01-02T23:30", "time_zone": "UTC"},
        ),
        (
            CreateDaily("stand up", 8, 30, "MON-FRI"),
            TOKYO,
            "schedule_create",
            {"prompt": "stand up", "cron": "30 8 * * MON-FRI", "time_zone": "Asia/Tokyo"},
        ),
        (
            CreateEvery("drink water", 7200),
            TOKYO,
            "schedule_create",
            {"prompt": "drink water", "every_seconds": 7200},
        ),
        (List(), TOKYO, "schedule_list", {}),
        (Delete(ById("rem-1")), TOKYO, "schedule_delete", {"id": "rem-1"}),
        (Delete(Matching("water")), TOKYO, "schedule_list", {}),
        (Delete(All()), TOKYO, "schedule_list", {}),
        (SetPaused(ById("rem-2"), paused=True), TOKYO, "schedule_list", {}),
        (Move(ById("rem-1"), 10, 0), TOKYO, "schedule_list", {}),
    ],
)
def test_each_intent_starts_with_its_tool_call_in_the_person_s_zone(
    intent: Intent, context: Context, name: str, arguments: dict[str, Any]
) -> None:
    assert first_call(intent, context) == (name, arguments)  # type: ignore[arg-type]


def view(rule: dict[str, JsonValue], next_at: JsonValue = "2026-01-03T00:00:00.000Z") -> Any:
    return {"id": "rem-1", "revision": 3, "rule": rule, "nextAt": next_at}


ONCE = {"kind": "at", "at": "2026-01-03T09:00"}


@pytest.mark.parametrize(
    ("intent", "shown", "arguments"),
    [
        (SetPaused(ById("rem-1"), paused=True), view(ONCE), {"paused": True}),
        (SetPaused(ById("rem-1"), paused=False), view(ONCE), {"paused": False}),
        # a one-shot keeps its day (09:00 Tokyo on the 3rd) and moves to 10:00 there
        (
            Move(ById("rem-1"), 10, 0),
            view(ONCE),
            {"at": "2026-01-03T10:00", "time_zone": "Asia/Tokyo"},
        ),
        # …unless that time has passed: it is 08:30 on the 2nd in Tokyo now
        (
            Move(ById("rem-1"), 8, 0),
            view(ONCE, "2026-01-01T23:00:00.000Z"),
            {"at": "2026-01-03T08:00", "time_zone": "Asia/Tokyo"},
        ),
        (
            Move(ById("rem-1"), 10, 0),
            view(ONCE, None),
            {"at": "2026-01-02T10:00", "time_zone": "Asia/Tokyo"},
        ),
        (
            Move(ById("rem-1"), 9, 0),
            view(ONCE, "not a time"),
            {"at": "2026-01-02T09:00", "time_zone": "Asia/Tokyo"},
        ),
        (
            Move(ById("rem-1"), 10, 0, day=date(2026, 1, 2)),
            view({"kind": "after", "seconds": 600}),
            {"at": "2026-01-02T10:00", "time_zone": "Asia/Tokyo"},
        ),
        (
            Move(ById("rem-1"), 10, 15),
            view({"kind": "cron", "cron": "0 9 * * MON-FRI"}),
            {"cron": "15 10 * * MON-FRI", "time_zone": "Asia/Tokyo"},
        ),
        (
            Move(ById("rem-1"), 10, 0),
            view({"kind": "every", "seconds": 7200}),
            {"every_seconds": 7200, "at": "2026-01-02T10:00", "time_zone": "Asia/Tokyo"},
        ),
        (Move(ById("rem-1"), 10, 0), view({"kind": "cron", "cron": "*/15 * * * *"}), None),
        (Move(ById("rem-1"), 10, 0), view({"kind": "cron", "cron": "0 9 * *"}), None),
        (Move(ById("rem-1"), 10, 0), view({"kind": "later"}), None),
        (Move(ById("rem-1"), 10, 0), view("broken"), None),  # type: ignore[arg-type]
    ],
)
def test_a_change_updates_the_listed_revision(
    intent: SetPaused | Move, shown: dict[str, JsonValue], arguments: dict[str, Any] | None
) -> None:
    expected = None if arguments is None else {"id": "rem-1", "revision": 3, **arguments}
    assert change_arguments(intent, shown, TOKYO) == expected


def test_a_zone_this_machine_does_not_know_is_utc() -> None:
    assert load_zone("Mars/Olympus").key == "UTC"
    assert load_zone(None).key == "UTC"
    assert Context(NOW, "Mars/Olympus").day(0).isoformat() == "2026-01-01"


LISTED: list[JsonValue] = [
    {"id": "rem-1", "prompt": "Stretch legs"},
    {"id": "rem-2", "prompt": "drink water"},
    {"id": "rem-3", "prompt": "stretch back"},
    "not a view",
]


@pytest.mark.parametrize(
    ("target", "ids"),
    [
        (ById("rem-2"), ["rem-2"]),
        (ById("rem-9"), []),
        (All(), ["rem-1", "rem-2", "rem-3"]),
        (Matching("stretch"), ["rem-1", "rem-3"]),
        (Matching("STRETCH back"), ["rem-3"]),
        (Matching("back water"), []),
    ],
)
def test_a_target_matches_the_listed_reminders_by_id_by_every_word_or_all(
    target: ById | Matching | All, ids: list[str]
) -> None:
    assert [view["id"] for view in matching(target, LISTED)] == ids
