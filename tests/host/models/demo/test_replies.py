from __future__ import annotations

import pytest
from pydantic import JsonValue

from dsh.models.base import Message
from dsh.models.demo.intents import Create, Delete, List
from dsh.models.demo.replies import (
    calling,
    help_text,
    not_enabled,
    reminder,
    span,
    tool_result,
    unclear,
    utc,
)

VIEW: dict[str, JsonValue] = {
    "id": "rem-1",
    "kind": "after",
    "prompt": "stretch",
    "afterSeconds": 10,
    "scheduledAt": "2026-01-01T00:00:10.000Z",
    "state": "scheduled",
    "deliveryMode": "session-local",
}


def result(name: str, content: JsonValue, is_error: bool = False) -> Message:
    return Message(role="tool", name=name, tool_call_id="c", content=content, is_error=is_error)


@pytest.mark.parametrize(
    ("seconds", "english", "chinese"),
    [
        (1, "1 second", "1秒"),
        (10, "10 seconds", "10秒"),
        (90, "90 seconds", "90秒"),
        (300, "5 minutes", "5分钟"),
        (3600, "1 hour", "1小时"),
        (7200, "2 hours", "2小时"),
        (86400, "1 day", "1天"),
        (0, "0 seconds", "0秒"),
    ],
)
def test_a_span_uses_its_largest_whole_unit(seconds: int, english: str, chinese: str) -> None:
    assert span(seconds, zh=False) == english
    assert span(seconds, zh=True) == chinese


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("2026-01-01T00:00:10.000Z", "2026-01-01 00:00:10 UTC"),
        ("2026-01-01T08:00:10+08:00", "2026-01-01 00:00:10 UTC"),
        ("2026-01-01T00:00:10", "2026-01-01 00:00:10 UTC"),
        ("tomorrow", "tomorrow"),
        (None, "null"),
        (12, "12"),
    ],
)
def test_times_are_shown_in_utc_and_anything_else_unchanged(value: JsonValue, shown: str) -> None:
    assert utc(value) == shown


def test_a_created_reminder_is_described_with_id_utc_time_and_session_local() -> None:
    text = tool_result(result("schedule_create", VIEW), zh=False)

    assert text == (
        "Reminder rem-1 is set for 2026-01-01 00:00:10 UTC (in 10 seconds): “stretch”. "
        "It is session-local: it fires only while this session is live."
    )


V2_VIEW: dict[str, JsonValue] = {
    "id": "rem-1",
    "prompt": "stretch",
    "rule": {"kind": "after", "seconds": 10},
    "timeZone": "UTC",
    "nextAt": "2026-01-01T00:00:10.000Z",
    "state": "scheduled",
    "deliveryMode": "session-local",
}


def test_a_protocol_v2_view_is_described_from_its_next_time_and_rule() -> None:
    assert tool_result(result("schedule_create", V2_VIEW), zh=False) == (
        tool_result(result("schedule_create", VIEW), zh=False)
    )
    every = {**V2_VIEW, "rule": {"kind": "every", "seconds": 60}}
    assert "(in " not in tool_result(result("schedule_create", every), zh=False)
    listed = tool_result(result("schedule_list", {"reminders": [V2_VIEW]}), zh=False)
    assert "- rem-1: “stretch” at 2026-01-01 00:00:10 UTC (scheduled)" in listed


def test_a_created_reminder_is_described_in_chinese() -> None:
    text = tool_result(result("schedule_create", {**VIEW, "prompt": "喝水"}), zh=True)

    assert text.startswith("已设置提醒 rem-1：2026-01-01 00:00:10 UTC（10秒后）提醒你“喝水”。")
    assert "session-local" in text


@pytest.mark.parametrize("after", [None, True, "10"])
def test_a_created_reminder_without_whole_seconds_omits_the_span(after: JsonValue) -> None:
    view = {**VIEW, "afterSeconds": after}

    assert "(in " not in tool_result(result("schedule_create", view), zh=False)
    assert "后）" not in tool_result(result("schedule_create", view), zh=True)


def test_a_list_shows_each_reminder() -> None:
    overdue = {**VIEW, "id": "rem-2", "prompt": "call mom", "state": "overdue"}
    message = result("schedule_list", {"reminders": [VIEW, overdue, "odd"]})

    assert tool_result(message, zh=False).splitlines() == [
        "Your reminders (session-local):",
        "- rem-1: “stretch” at 2026-01-01 00:00:10 UTC (scheduled)",
        "- rem-2: “call mom” at 2026-01-01 00:00:10 UTC (overdue)",
        '- "odd"',
    ]
    assert tool_result(message, zh=True).splitlines()[:2] == [
        "你的提醒（session-local）：",
        "- rem-1：“stretch”，2026-01-01 00:00:10 UTC（scheduled）",
    ]


def test_an_empty_list_says_there_are_no_reminders() -> None:
    message = result("schedule_list", {"reminders": []})

    assert tool_result(message, zh=False) == "You have no reminders."
    assert tool_result(message, zh=True) == "当前没有提醒。"


@pytest.mark.parametrize(
    ("content", "english", "chinese"),
    [
        ({"id": "rem-1", "deleted": True}, "Deleted reminder rem-1.", "已删除提醒 rem-1。"),
        (
            {"id": "rem-9", "deleted": False, "code": "schedule_not_found"},
            "There is no active reminder rem-9 (schedule_not_found).",
            "没有找到进行中的提醒 rem-9（schedule_not_found）。",
        ),
        (
            {"id": "rem-9", "deleted": False},
            "There is no active reminder rem-9 (schedule_not_found).",
            "没有找到进行中的提醒 rem-9（schedule_not_found）。",
        ),
    ],
)
def test_a_delete_says_deleted_or_not_found(content: JsonValue, english: str, chinese: str) -> None:
    assert tool_result(result("schedule_delete", content), zh=False) == english
    assert tool_result(result("schedule_delete", content), zh=True) == chinese


def test_an_error_result_gives_its_code_and_message() -> None:
    error: JsonValue = {"code": "invalid_rule", "message": "after_seconds must be positive"}
    message = result("schedule_create", error, is_error=True)

    assert tool_result(message, zh=False) == (
        "schedule_create failed: invalid_rule: after_seconds must be positive"
    )
    assert tool_result(message, zh=True) == (
        "schedule_create 失败：invalid_rule：after_seconds must be positive"
    )


def test_an_error_without_the_usual_shape_is_still_shown() -> None:
    message = result("schedule_list", "boom", is_error=True)

    assert tool_result(message, zh=False) == 'schedule_list failed: error: "boom"'


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("weather", {"temp": 3}),
        ("schedule_create", {"no": "id"}),
        ("schedule_list", {"reminders": "none"}),
        ("schedule_delete", {"id": "x"}),
        ("schedule_list", [1, 2]),
    ],
)
def test_any_other_result_is_shown_as_json(name: str, content: JsonValue) -> None:
    assert tool_result(result(name, content), zh=False).startswith(f"{name} returned: ")
    assert tool_result(result(name, content), zh=True).startswith(f"{name} 返回：")


def test_a_reminder_is_answered_in_the_language_of_its_prompt() -> None:
    assert reminder("stretch") == "⏰ Reminder: stretch"
    assert reminder("喝水") == "⏰ 提醒：喝水"


def test_the_text_that_accompanies_each_call_names_what_is_happening() -> None:
    assert (
        calling(Create("stretch", 10), zh=False) == "Setting a reminder in 10 seconds: “stretch”."
    )
    assert calling(Create("喝水", 300), zh=True) == "好的，5分钟后提醒你“喝水”。"
    assert calling(List(), zh=False) == "Checking your reminders."
    assert calling(List(), zh=True) == "正在查看你的提醒。"
    assert calling(Delete("rem-1"), zh=False) == "Cancelling reminder rem-1."
    assert calling(Delete("rem-1"), zh=True) == "正在删除提醒 rem-1。"


@pytest.mark.parametrize("zh", [False, True])
def test_help_says_it_is_a_demo_and_how_to_configure_a_real_model(zh: bool) -> None:
    text = help_text(zh, reminders_enabled=True)

    assert "demo" in text
    for needle in ("--model openai", "DSH_API_KEY", "DSH_MODEL_BASE_URL", "DSH_MODEL"):
        assert needle in text
    assert "overlays/web-schedule" not in text
    assert "dsh web --overlay overlays/web-schedule" in help_text(zh, reminders_enabled=False)


def test_not_enabled_and_unclear_say_what_to_do_in_both_languages() -> None:
    assert not_enabled(False).startswith("Reminders are not enabled in this host.")
    assert not_enabled(False).endswith("dsh web --overlay overlays/web-schedule")
    assert not_enabled(True).startswith("此主机未启用提醒功能")
    assert "remind me in 10 minutes to stretch" in unclear(False)
    assert "10秒后提醒我喝水" in unclear(True)
