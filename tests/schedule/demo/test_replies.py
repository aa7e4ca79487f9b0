from __future__ import annotations

from typing import Any

import pytest

from dsh_tool_schedule.demo.intents import (
    Create,
    CreateAt,
    CreateDaily,
    CreateEvery,
    Delete,
    Intent,
    List,
    Move,
    SetPaused,
)
from dsh_tool_schedule.demo.replies import (
    calling,
    help_text,
    not_enabled,
    reasoning,
    reminder,
    unclear,
    updating,
)


@pytest.mark.parametrize(
    ("prompt", "reminder_id", "zh", "text"),
    [
        ("stretch", "rem-1", False, "⏰ Reminder: stretch"),
        ("stretch", "rem-1", True, "⏰ 提醒：stretch"),
        ("喝水", None, True, "⏰ 提醒：喝水"),
        (None, "rem-3", False, "⏰ Reminder rem-3 is due."),
        (None, "rem-3", True, "⏰ 提醒 rem-3 到时间了。"),
        (None, None, False, "⏰ A reminder is due."),
        (None, None, True, "⏰ 有一个提醒到时间了。"),
    ],
)
def test_a_due_reminder_is_answered_in_the_language_asked_for(
    prompt: str | None, reminder_id: str | None, zh: bool, text: str
) -> None:
    assert reminder(prompt, reminder_id, zh) == text


def test_the_text_that_accompanies_each_call_names_what_is_happening() -> None:
    assert (
        calling(Create("stretch", 10), zh=False) == "Setting a reminder in 10 seconds: “stretch”."
    )
    assert calling(Create("喝水", 300), zh=True) == "好的，5分钟后提醒你“喝水”。"
    assert calling(List(), zh=False) == "Checking your reminders."
    assert calling(List(), zh=True) == "正在查看你的提醒。"
    assert calling(Delete("rem-1"), zh=False) == "Cancelling reminder rem-1."
    assert calling(Delete("rem-1"), zh=True) == "正在删除提醒 rem-1。"


BERLIN = {"time_zone": "Europe/Berlin"}


@pytest.mark.parametrize(
    ("intent", "arguments", "english", "chinese"),
    [
        (
            CreateAt("call mum", 1, 9, 0),
            {"at": "2026-01-02T09:00", **BERLIN},
            "Setting a reminder for 2026-01-02 09:00 (Europe/Berlin): “call mum”.",
            "好的，2026-01-02 09:00（Europe/Berlin）提醒你“call mum”。",
        ),
        (
            CreateDaily("stretch", 9, 0),
            BERLIN,
            "Setting a reminder every day at 09:00 (Europe/Berlin): “stretch”.",
            "好的，每天 09:00（Europe/Berlin）提醒你“stretch”。",
        ),
        (
            CreateDaily("stand up", 8, 30, days="MON-FRI"),
            BERLIN,
            "Setting a reminder every weekday at 08:30 (Europe/Berlin): “stand up”.",
            "好的，每个工作日 08:30（Europe/Berlin）提醒你“stand up”。",
        ),
        (
            CreateDaily("report", 10, 0, days="MON"),
            {},
            "Setting a reminder every Monday at 10:00 (UTC): “report”.",
            "好的，每周一 10:00（UTC）提醒你“report”。",
        ),
        (
            CreateDaily("rest", 10, 0, days="SUN"),
            {},
            "Setting a reminder every Sunday at 10:00 (UTC): “rest”.",
            "好的，每周日 10:00（UTC）提醒你“rest”。",
        ),
        (
            CreateEvery("drink water", 7200),
            {},
            "Setting a reminder every 2 hours: “drink water”.",
            "好的，每隔2小时提醒你“drink water”。",
        ),
        (
            SetPaused("rem-2", paused=True),
            {},
            "Checking reminder rem-2 before pausing it.",
            "先查看提醒 rem-2，再暂停它。",
        ),
        (
            SetPaused("rem-2", paused=False),
            {},
            "Checking reminder rem-2 before resuming it.",
            "先查看提醒 rem-2，再恢复它。",
        ),
        (
            Move("rem-1", 10, 0),
            {},
            "Checking reminder rem-1 before moving it to 10:00.",
            "先查看提醒 rem-1，再把它改到 10:00。",
        ),
    ],
)
def test_each_new_request_is_announced_with_its_time(
    intent: Intent, arguments: dict[str, Any], english: str, chinese: str
) -> None:
    assert calling(intent, zh=False, arguments=arguments) == english
    assert calling(intent, zh=True, arguments=arguments) == chinese


@pytest.mark.parametrize(
    ("intent", "arguments", "english", "chinese"),
    [
        (SetPaused("rem-2", paused=True), {}, "Pausing reminder rem-2.", "正在暂停提醒 rem-2。"),
        (SetPaused("rem-2", paused=False), {}, "Resuming reminder rem-2.", "正在恢复提醒 rem-2。"),
        (
            Move("rem-1", 10, 0),
            {"at": "2026-01-02T10:00", **BERLIN},
            "Moving reminder rem-1 to 2026-01-02 10:00 (Europe/Berlin).",
            "正在把提醒 rem-1 改到 2026-01-02 10:00（Europe/Berlin）。",
        ),
        (
            Move("rem-2", 10, 0),
            {"cron": "0 10 * * *", **BERLIN},
            "Moving reminder rem-2 to 10:00 (Europe/Berlin).",
            "正在把提醒 rem-2 改到 10:00（Europe/Berlin）。",
        ),
    ],
)
def test_the_update_of_a_change_is_announced(
    intent: SetPaused | Move, arguments: dict[str, Any], english: str, chinese: str
) -> None:
    assert updating(intent, zh=False, arguments=arguments) == english
    assert updating(intent, zh=True, arguments=arguments) == chinese


def test_the_reasoning_says_why_a_change_lists_first_and_when_a_reminder_fires() -> None:
    assert "an update needs its current revision, so I list the reminders first" in reasoning(
        Move("rem-1", 10, 0), "schedule_list", zh=False
    )
    assert "修改需要它当前的版本号，所以先列出提醒" in reasoning(
        SetPaused("rem-1", paused=True), "schedule_list", zh=True
    )
    assert "every day at 09:00 (Europe/Berlin): “stretch”, in the person's time zone" in (
        reasoning(CreateDaily("stretch", 9, 0), "schedule_create", zh=False, arguments=BERLIN)
    )
    assert "每隔2小时提醒“喝水”，时间按对方的时区" in reasoning(
        CreateEvery("喝水", 7200), "schedule_create", zh=True
    )


@pytest.mark.parametrize("zh", [False, True])
def test_the_help_lists_the_reminder_requests_and_says_how_to_enable_them_where_they_are_not(
    zh: bool,
) -> None:
    text = help_text(zh, reminders_enabled=True)

    assert ("10秒后提醒我喝水" if zh else "remind me in 10 seconds to stretch") in text
    assert "UTC" in text
    assert "overlays/web-schedule" not in text  # they are enabled here
    assert "dsh web --overlay overlays/web-schedule" in help_text(zh, reminders_enabled=False)


def test_not_enabled_and_unclear_say_what_to_do_in_both_languages() -> None:
    assert not_enabled(False).startswith("Reminders are not enabled in this host.")
    assert not_enabled(False).endswith("dsh web --overlay overlays/web-schedule")
    assert not_enabled(True).startswith("此主机未启用提醒功能")
    assert "remind me in 10 minutes to stretch" in unclear(False)
    assert "10秒后提醒我喝水" in unclear(True)
