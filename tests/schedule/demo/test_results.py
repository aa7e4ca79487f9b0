from __future__ import annotations

from datetime import date

import pytest
from pydantic import JsonValue

from dsh.models.base import Message
from dsh_tool_schedule.demo.kinds import ById, CreateAt, Move, SetPaused
from dsh_tool_schedule.demo.results import cannot_move, error_text, not_found, tool_result

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


def test_a_created_reminder_is_described_with_id_utc_time_and_what_a_closed_one_does() -> None:
    text = tool_result(result("schedule_create", VIEW), zh=False)
    woken = tool_result(result("schedule_create", {**VIEW, "firesWhenClosed": True}), zh=False)

    assert text == (
        "Reminder rem-1 is set for 2026-01-01 00:00:10 UTC (in 10 seconds): “stretch”. "
        "It fires only while this conversation is open."
    )
    assert woken.endswith("“stretch”. It fires even when this conversation is closed.")


def test_today_at_a_passed_time_is_said_to_be_set_for_tomorrow() -> None:
    view = {**V2_VIEW, "rule": {"kind": "at", "at": "2026-01-02T08:00"}}
    asked = CreateAt("stretch", None, 8, 0)
    created = result("schedule_create", view)

    english = tool_result(created, zh=False, intent=asked, today="2026-01-01")
    chinese = tool_result(created, zh=True, intent=asked, today="2026-01-01")
    today = CreateAt("stretch", date(2026, 1, 1), 8, 0)

    assert english.startswith("8:00 has already passed today, so it is set for tomorrow. Reminder")
    assert chinese.startswith("今天的 8:00 已经过去了，所以设在明天。已设置提醒")
    assert tool_result(created, zh=False, intent=today, today="2026-01-01") == english
    for not_rolled in (
        tool_result(created, zh=False, intent=asked, today="2026-01-02"),
        tool_result(
            created,
            zh=False,
            intent=CreateAt("stretch", date(2026, 1, 2), 8, 0),
            today="2026-01-01",
        ),
        tool_result(created, zh=False, intent=asked),
        tool_result(result("schedule_create", V2_VIEW), zh=False, intent=asked, today="2026-01-01"),
    ):
        assert not_rolled.startswith("Reminder rem-1")


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

    assert text == (
        "已设置提醒 rem-1：2026-01-01 00:00:10 UTC（10秒后）提醒你“喝水”。"
        "只有在这个对话打开时，它才会提醒。"
    )
    woken = tool_result(result("schedule_create", {**VIEW, "firesWhenClosed": True}), zh=True)
    assert woken.endswith("即使关闭这个对话，它也会按时提醒。")


@pytest.mark.parametrize("after", [None, True, "10"])
def test_a_created_reminder_without_whole_seconds_omits_the_span(after: JsonValue) -> None:
    view = {**VIEW, "afterSeconds": after}

    assert "(in " not in tool_result(result("schedule_create", view), zh=False)
    assert "后）" not in tool_result(result("schedule_create", view), zh=True)


def test_a_list_shows_each_reminder() -> None:
    overdue = {**VIEW, "id": "rem-2", "prompt": "call mom", "state": "overdue"}
    message = result("schedule_list", {"reminders": [VIEW, overdue, "odd"]})

    assert tool_result(message, zh=False).splitlines() == [
        "Your reminders:",
        "- rem-1: “stretch” at 2026-01-01 00:00:10 UTC (scheduled)",
        "- rem-2: “call mom” at 2026-01-01 00:00:10 UTC (overdue)",
        '- "odd"',
    ]
    assert tool_result(message, zh=True).splitlines()[:2] == [
        "你的提醒：",
        "- rem-1：“stretch”，2026-01-01 00:00:10 UTC（已安排）",
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
            "There is no active reminder rem-9 [schedule_not_found].",
            "没有找到进行中的提醒 rem-9 [schedule_not_found]。",
        ),
        (
            {"id": "rem-9", "deleted": False},
            "There is no active reminder rem-9 [schedule_not_found].",
            "没有找到进行中的提醒 rem-9 [schedule_not_found]。",
        ),
    ],
)
def test_a_delete_says_deleted_or_not_found(content: JsonValue, english: str, chinese: str) -> None:
    assert tool_result(result("schedule_delete", content), zh=False) == english
    assert tool_result(result("schedule_delete", content), zh=True) == chinese


ERRORS: list[tuple[str, str, str, str, str]] = [
    (
        "schedule_create",
        "invalid_rule",
        "at='2026-01-01T08:00' has passed",
        "Couldn't set the reminder [invalid_rule]: at='2026-01-01T08:00' has passed",
        "设置提醒失败 [invalid_rule]：时间规则无效：可能时间已经过去、时区未知、cron 表达式不对，"
        "或规则永远不会触发。",
    ),
    (
        "schedule_create",
        "limit_exceeded",
        "every_seconds=10 is more often than this host allows",
        "Couldn't set the reminder [limit_exceeded]: every_seconds=10 is more often than this "
        "host allows",
        "设置提醒失败 [limit_exceeded]：超出了限制：提醒太多、这一轮设置了太多，"
        "或间隔比主机允许的最短间隔还短。",
    ),
    (
        "schedule_update",
        "schedule_conflict",
        "revision 1 is not the current revision 2",
        "Couldn't change the reminder [schedule_conflict]: "
        "revision 1 is not the current revision 2",
        "修改提醒失败 [schedule_conflict]：提醒已经被修改过（版本号不一致），请先列出提醒再试。",
    ),
    (
        "schedule_list",
        "persistence_uncertain",
        "storage failed",
        "Couldn't list the reminders [persistence_uncertain]: storage failed",
        "列出提醒失败 [persistence_uncertain]：存储在确认时出错，无法确定是否已保存；"
        "请先列出提醒，看它是否已经存在。",
    ),
    (
        "schedule_delete",
        "persistence_unavailable",
        "no durable storage",
        "Couldn't delete the reminder [persistence_unavailable]: no durable storage",
        "删除提醒失败 [persistence_unavailable]：没有可用的持久存储，提醒在重启后不会保留。",
    ),
    (
        "schedule_update",
        "schedule_not_found",
        "'rem-9' is not an active reminder",
        "Couldn't change the reminder [schedule_not_found]: 'rem-9' is not an active reminder",
        "修改提醒失败 [schedule_not_found]：没有这个进行中的提醒（不存在、已删除或已结束）。",
    ),
    (
        "weather",
        "rain_check",
        "no forecast",
        "weather failed [rain_check]: no forecast",
        "weather 失败 [rain_check]：工具返回了错误：no forecast。",
    ),
]


@pytest.mark.parametrize(("tool", "code", "message", "english", "chinese"), ERRORS)
def test_an_error_keeps_its_code_in_brackets_and_is_said_in_the_conversation_s_language(
    tool: str, code: str, message: str, english: str, chinese: str
) -> None:
    error = result(tool, {"code": code, "message": message}, is_error=True)

    assert tool_result(error, zh=False) == english
    assert tool_result(error, zh=True) == chinese


@pytest.mark.parametrize(
    "code",
    [
        "invalid_prompt",
        "invalid_rule",
        "limit_exceeded",
        "schedule_conflict",
        "schedule_not_found",
        "persistence_uncertain",
        "persistence_unavailable",
        "schedule_log_invalid",
        "invalid_arguments",
        "internal_error",
    ],
)
def test_every_schedule_error_code_has_a_chinese_explanation(code: str) -> None:
    text = error_text("schedule_create", {"code": code, "message": "English detail"}, zh=True)

    assert f"[{code}]" in text and "English detail" not in text


def test_an_error_without_the_usual_shape_is_still_shown() -> None:
    message = result("schedule_list", "boom", is_error=True)

    assert tool_result(message, zh=False) == 'Couldn\'t list the reminders [error]: "boom"'


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


DAILY: dict[str, JsonValue] = {
    "id": "rem-2",
    "prompt": "water the plants",
    "rule": {"kind": "cron", "cron": "0 9 * * *"},
    "ruleText": "at 09:00 every day (Europe/Berlin)",
    "timeZone": "Europe/Berlin",
    "nextAt": "2026-01-02T08:00:00.000Z",
    "state": "scheduled",
    "revision": 1,
    "deliveryMode": "session-local",
}


def test_times_are_said_in_the_person_s_zone_with_utc_beside_them() -> None:
    english = tool_result(result("schedule_create", DAILY), zh=False, zone="Europe/Berlin")
    chinese = tool_result(result("schedule_create", DAILY), zh=True, zone="Asia/Shanghai")

    assert english == (
        "Reminder rem-2 is set for 2026-01-02 09:00:00 Europe/Berlin (2026-01-02 08:00:00 UTC): "
        "“water the plants”. Rule: at 09:00 every day (Europe/Berlin). "
        "It fires only while this conversation is open."
    )
    assert chinese == (
        "已设置提醒 rem-2：2026-01-02 16:00:00 Asia/Shanghai（2026-01-02 08:00:00 UTC）"
        "提醒你“water the plants”。规则：每天 09:00。只有在这个对话打开时，它才会提醒。"
    )


def test_a_list_names_recurring_rules_and_reminders_with_nothing_ahead() -> None:
    done = {**DAILY, "id": "rem-3", "nextAt": None, "state": "paused"}
    message = result("schedule_list", {"reminders": [DAILY, done]})

    assert tool_result(message, zh=False, zone="Europe/Berlin").splitlines()[1:] == [
        "- rem-2: “water the plants” at 2026-01-02 09:00:00 Europe/Berlin "
        "(2026-01-02 08:00:00 UTC) (scheduled), at 09:00 every day (Europe/Berlin)",
        "- rem-3: “water the plants” with no next occurrence (paused), at 09:00 every day "
        "(Europe/Berlin)",
    ]
    assert tool_result(message, zh=True).splitlines()[1:] == [
        "- rem-2：“water the plants”，2026-01-02 08:00:00 UTC（已安排），每天 09:00",
        "- rem-3：“water the plants”，没有下一次（已暂停），每天 09:00",
    ]


@pytest.mark.parametrize(
    ("intent", "english", "chinese"),
    [
        (
            SetPaused(ById("rem-2"), paused=True),
            "Reminder rem-2 is paused: “water the plants”.",
            "已暂停提醒 rem-2（“water the plants”）。",
        ),
        (
            SetPaused(ById("rem-2"), paused=False),
            "Reminder rem-2 is resumed: “water the plants”, next at 2026-01-02 08:00:00 UTC.",
            "已恢复提醒 rem-2（“water the plants”），下次：2026-01-02 08:00:00 UTC。",
        ),
        (
            Move(ById("rem-2"), 10, 0),
            "Reminder rem-2 now fires at 2026-01-02 08:00:00 UTC: “water the plants”.",
            "已把提醒 rem-2（“water the plants”）改到：2026-01-02 08:00:00 UTC。",
        ),
        (
            None,
            "Reminder rem-2 is updated (revision 1): next at 2026-01-02 08:00:00 UTC (scheduled).",
            "已修改提醒 rem-2（第 1 版）：下次 2026-01-02 08:00:00 UTC（已安排）。",
        ),
    ],
)
def test_an_update_is_said_as_what_the_person_asked_for(
    intent: SetPaused | Move | None, english: str, chinese: str
) -> None:
    message = result("schedule_update", DAILY)

    assert tool_result(message, zh=False, intent=intent) == english
    assert tool_result(message, zh=True, intent=intent) == chinese


def test_a_missing_reminder_and_a_rule_the_demo_cannot_move_are_said_plainly() -> None:
    every_quarter = {**DAILY, "rule": {"kind": "cron", "cron": "*/15 * * * *"}, "ruleText": "q"}

    assert not_found("rem-4", zh=False) == "There is no active reminder rem-4 [schedule_not_found]."
    assert not_found("rem-4", zh=True) == "没有找到进行中的提醒 rem-4 [schedule_not_found]。"
    assert cannot_move(every_quarter, zh=False) == (
        "I can only move a reminder that fires once, at one time of day, or every so many "
        "seconds; rem-2 fires q."
    )
    assert cannot_move(every_quarter, zh=True) == (
        "我只能移动一次性、每天固定时间或固定间隔的提醒；rem-2 的规则是“按 cron “*/15 * * * *””。"
    )
