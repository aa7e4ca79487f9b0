from __future__ import annotations

from typing import Any

import pytest
from pydantic import JsonValue

from dsh.cli.events import CLIP, compact, summarize, utc
from dsh.session.event import SessionEvent


def summary(type: str, data: JsonValue) -> str:
    return summarize(SessionEvent(seq=0, type=type, time=0, data=data))


def test_utc_times_have_milliseconds_and_a_z() -> None:
    assert utc(1_767_225_600_123) == "2026-01-01T00:00:00.123Z"


def test_a_time_out_of_range_is_shown_as_the_raw_number() -> None:
    assert utc(10**20) == str(10**20)


def test_compact_json_keeps_non_ascii_and_clips_long_values() -> None:
    assert compact({"text": "提醒我"}) == '{"text":"提醒我"}'
    clipped = compact("x" * 500)
    assert len(clipped) == CLIP
    assert clipped.endswith("...")


@pytest.mark.parametrize(
    ("type", "data", "expected"),
    [
        ("message/user", {"text": "hi\nthere", "source": {"kind": "user"}}, 'user: "hi\\nthere"'),
        (
            "message/user",
            {"text": "[reminder r1] stretch", "source": {"kind": "schedule"}},
            'schedule: "[reminder r1] stretch"',
        ),
        ("message/assistant", {"text": "Done.", "toolCalls": []}, '"Done."'),
        ("message/assistant", {"text": "", "toolCalls": []}, '""'),
        ("session/title", {"title": "Groceries"}, 'title: "Groceries"'),
        (
            "message/assistant",
            {
                "text": "Sure.",
                "toolCalls": [
                    {"id": "1", "name": "schedule_list", "arguments": {}},
                    {"id": "2", "name": "schedule_delete", "arguments": '{"id": "r1"'},
                ],
            },
            '"Sure." -> schedule_list({}) -> schedule_delete("{\\"id\\": \\"r1\\"")',
        ),
        (
            "tool/result",
            {"callId": "1", "name": "schedule_list", "value": []},
            "schedule_list = []",
        ),
        (
            "tool/result",
            {
                "callId": "1",
                "name": "schedule_create",
                "error": {"code": "invalid_rule", "message": "no cron"},
            },
            "schedule_create failed: invalid_rule: no cron",
        ),
        ("turn/end", {"status": "ok"}, "ok"),
        (
            "turn/end",
            {"status": "error", "error": {"code": "model_unavailable", "message": "no model"}},
            "error: model_unavailable: no model",
        ),
        (
            "schedule/change",
            {"version": 2, "change": "delete", "id": "rem-1"},
            '{"version":2,"change":"delete","id":"rem-1"}',
        ),
        ("session/end-seed", {}, "(end of the seed: a new live lifecycle starts here)"),
        ("plugin/thing", {"any": [1, 2]}, '{"any":[1,2]}'),
    ],
)
def test_each_event_type_has_a_readable_summary(type: str, data: Any, expected: str) -> None:
    assert summary(type, data) == expected


@pytest.mark.parametrize(
    ("type", "data"),
    [
        ("message/user", "just text"),
        ("message/user", {"text": "hi"}),
        ("message/assistant", {"text": ""}),
        ("tool/result", {"name": "x", "error": {"code": 3}}),
        ("message/user", {"source": {"kind": "user"}}),
        ("message/assistant", {"text": 3}),
        ("message/assistant", {"text": "", "toolCalls": "none"}),
        ("message/assistant", {"text": "", "toolCalls": [{"id": "1"}]}),
        ("message/assistant", {"text": "", "toolCalls": ["x"]}),
        ("tool/result", {"callId": "1"}),
        ("tool/result", {"callId": "1", "name": "x"}),
        ("turn/end", {"status": 1}),
        ("turn/end", []),
        ("session/end-seed", {"extra": 1}),
        ("schedule/change", {"version": 1, "change": "create", "record": "r1"}),
    ],
)
def test_data_that_does_not_match_its_type_is_shown_as_compact_json(type: str, data: Any) -> None:
    assert summary(type, data) == compact(data)


def test_a_plugin_s_event_is_shown_as_stored_whatever_its_type() -> None:
    # The host knows no plugin's payloads: a reminder is JSON like any other plugin event.
    create = {"version": 2, "change": "create", "record": {"id": "rem-1", "prompt": "提醒"}}

    assert summary("schedule/change", create) == compact(create)
    assert summary("notes/change", {"op": "clear"}) == '{"op":"clear"}'


def test_long_texts_are_clipped() -> None:
    text = summary("message/user", {"text": "y" * 1000, "source": {"kind": "user"}})

    assert text.startswith('user: "yyy')
    assert text.endswith("...")
    assert len(text) == len("user: ") + CLIP
