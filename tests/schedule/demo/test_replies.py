from __future__ import annotations

from datetime import date
from typing import Any

import pytest

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
from dsh_tool_schedule.demo.replies import (
    ASK_WHEN,
    calling,
    deleting,
    help_text,
    no_match,
    not_enabled,
    reasoning,
    reminder,
    unclear,
    updating,
    which_one,
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
    assert calling(Delete(ById("rem-1")), zh=False) == "Cancelling reminder rem-1."
    assert calling(Delete(ById("rem-1")), zh=True) == "正在删除提醒 rem-1。"
    assert calling(Delete(All()), zh=False) == "Checking all reminders before cancelling."
    assert calling(Delete(Matching("喝水")), zh=True) == "先查看“喝水”的提醒，再删除。"
    assert deleting(["rem-1"], zh=False) == "Cancelling reminder rem-1."
    assert deleting(["rem-1", "rem-3"], zh=False) == "Cancelling reminders rem-1, rem-3."
    assert deleting(["rem-1", "rem-3"], zh=True) == "正在删除提醒 rem-1、rem-3。"


def test_two_matches_are_asked_about_by_their_words_and_ids() -> None:
    views: list[dict[str, Any]] = [
        {"id": "rem-2", "prompt": "stretch legs"},
        {"id": "rem-4", "prompt": "stretch back"},
    ]
    assert which_one(views, zh=False) == (
        "Which one: “stretch legs” (rem-2) or “stretch back” (rem-4)?"
    )
    assert which_one([*views, {"id": "rem-5", "prompt": "stretch"}], zh=False) == (
        "Which one: “stretch legs” (rem-2), “stretch back” (rem-4) or “stretch” (rem-5)?"
    )
    assert which_one(views, zh=True) == (
        "是哪一个：“stretch legs”（rem-2）还是“stretch back”（rem-4）？"
    )


def test_no_match_says_what_was_looked_for() -> None:
    assert no_match(Matching("water"), zh=False) == "No reminder matches “water”."
    assert no_match(Matching("喝水"), zh=True) == "没有找到“喝水”的提醒。"
    assert no_match(All(), zh=False) == "You have no reminders."
    assert no_match(All(), zh=True) == "当前没有提醒。"
    assert no_match(ById("rem-9"), zh=False) == "No reminder matches “rem-9”."


def test_a_reminder_without_a_time_is_asked_when_in_both_languages() -> None:
    assert ASK_WHEN == {False: "When should I remind you?", True: "什么时候提醒你？"}


BERLIN = {"time_zone": "Europe/Berlin"}


@pytest.mark.parametrize(
    ("intent", "arguments", "english", "chinese"),
    [
        (
            CreateAt("call mum", date(2026, 1, 2), 9, 0),
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
            SetPaused(ById("rem-2"), paused=True),
            {},
            "Checking reminder rem-2 before pausing it.",
            "先查看提醒 rem-2，再暂停它。",
        ),
        (
            SetPaused(Matching("water"), paused=False),
            {},
            "Checking the “water” reminder before resuming it.",
            "先查看“water”的提醒，再恢复它。",
        ),
        (
            Move(ById("rem-1"), 10, 0),
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
        (
            SetPaused(Matching("water"), paused=True),
            {"id": "rem-2"},
            "Pausing reminder rem-2.",
            "正在暂停提醒 rem-2。",
        ),
        (
            SetPaused(All(), paused=False),
            {"id": "rem-2"},
            "Resuming reminder rem-2.",
            "正在恢复提醒 rem-2。",
        ),
        (
            Move(Matching("stretch"), 10, 0),
            {"id": "rem-1", "at": "2026-01-02T10:00", **BERLIN},
            "Moving reminder rem-1 to 2026-01-02 10:00 (Europe/Berlin).",
            "正在把提醒 rem-1 改到 2026-01-02 10:00（Europe/Berlin）。",
        ),
        (
            Move(ById("rem-2"), 10, 0),
            {"id": "rem-2", "cron": "0 10 * * *", **BERLIN},
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
    assert "I list the reminders first, to see which it means and its current revision" in (
        reasoning(Move(Matching("stretch"), 10, 0), "schedule_list", zh=False)
    )
    assert "我先列出提醒，看是哪一个、当前的版本号是多少" in reasoning(
        SetPaused(ById("rem-1"), paused=True), "schedule_list", zh=True
    )
    assert "The message asks to cancel reminder rem-1." in reasoning(
        Delete(ById("rem-1")), "schedule_delete", zh=False
    )
    assert "这条消息要删除所有提醒。" in reasoning(Delete(All()), "schedule_delete", zh=True)
    assert "The message asks to change the “tea” reminder." in reasoning(
        Move(Matching("tea"), 10, 0), "schedule_update", zh=False
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

    assert ("10分钟后提醒我喝水" if zh else "remind me in 10 minutes to stretch") in text
    assert "UTC" in text
    assert "overlays/web-schedule" not in text  # they are enabled here
    assert "dsh web --overlay overlays/web-schedule" in help_text(zh, reminders_enabled=False)


def test_not_enabled_and_unclear_say_what_to_do_in_both_languages() -> None:
    assert not_enabled(False).startswith("Reminders are not enabled in this host.")
    assert not_enabled(False).endswith("dsh web --overlay overlays/web-schedule")
    assert not_enabled(True).startswith("此主机未启用提醒功能")
    assert "remind me in 10 minutes to stretch" in unclear(False)
    assert "10分钟后提醒我喝水" in unclear(True)
