from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest

from dsh_tool_schedule.demo.calls import Context
from dsh_tool_schedule.demo.intents import choose, complete, has_chinese, read_intent
from dsh_tool_schedule.demo.kinds import (
    All,
    AskWhen,
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
    Unclear,
)
from dsh_tool_schedule.demo.replies import help_text

# Saturday 2026-12-05, 10:00 in Berlin.
NOW = int(datetime(2026, 12, 5, 9, 0, tzinfo=UTC).timestamp() * 1000)
CONTEXT = Context(NOW, "Europe/Berlin")
DAY = {offset: date(2026, 12, 5 + offset) for offset in range(3)}

PHRASES: list[tuple[str, Intent | None]] = [
    # the three English shapes
    ("remind me in 10 seconds to stretch", Create("stretch", 10)),
    ("remind me to call mom in 5 minutes", Create("call mom", 300)),
    ("in 2 hours remind me to check the oven", Create("check the oven", 7200)),
    # Chinese
    ("10秒后提醒我喝水", Create("喝水", 10)),
    ("5分钟后提醒我开会", Create("开会", 300)),
    ("提醒我10分钟后开会", Create("开会", 600)),
    ("两个小时后提醒我睡觉", Create("睡觉", 7200)),
    ("十五分钟后提醒我出门", Create("出门", 900)),
    ("二十秒后提醒我喝水。", Create("喝水", 20)),
    ("一百零五秒后提醒我看看", Create("看看", 105)),
    ("请3天后，提醒我交房租", Create("交房租", 259200)),
    ("1钟头之后提醒我吃饭", Create("吃饭", 3600)),
    ("30秒钟以后提醒我起身", Create("起身", 30)),
    # listing
    ("list reminders", List()),
    ("List my reminders.", List()),
    ("show me all my reminders", List()),
    ("what are my reminders?", List()),
    ("reminders", List()),
    ("列出提醒", List()),
    ("查看我的提醒", List()),
    ("我的提醒", List()),
    ("提醒列表", List()),
    # deleting
    ("cancel reminder rem-1", Delete(ById("rem-1"))),
    ("delete the reminder rem-12.", Delete(ById("rem-12"))),
    ("remove reminder `rem-3`", Delete(ById("rem-3"))),
    ("删除提醒 rem-2", Delete(ById("rem-2"))),
    ("取消提醒rem-4", Delete(ById("rem-4"))),
    # a time on a day
    ("remind me at 9:00 tomorrow to call mum", CreateAt("call mum", DAY[1], 9, 0)),
    ("remind me tomorrow at 9am to call mum", CreateAt("call mum", DAY[1], 9, 0)),
    (
        "Remind me at 3:30 pm today: pick up the parcel",
        CreateAt("pick up the parcel", DAY[0], 15, 30),
    ),
    ("remind me to call mum at 9 tomorrow", CreateAt("call mum", DAY[1], 9, 0)),
    ("tomorrow at 12 a.m., remind me to sleep", CreateAt("sleep", DAY[1], 0, 0)),
    ("at 18:45 today remind me to cook", CreateAt("cook", DAY[0], 18, 45)),
    ("明天上午9点提醒我开会", CreateAt("开会", DAY[1], 9, 0)),
    ("明天早上九点提醒我跑步", CreateAt("跑步", DAY[1], 9, 0)),
    ("今天下午3点半提醒我取快递", CreateAt("取快递", DAY[0], 15, 30)),
    ("后天晚上8点30分提醒我看电影", CreateAt("看电影", DAY[2], 20, 30)),
    ("提醒我明天9:00交报告", CreateAt("交报告", DAY[1], 9, 0)),
    ("请在明天中午12点，提醒我吃饭", CreateAt("吃饭", DAY[1], 12, 0)),
    ("明天中午1点提醒我午休", CreateAt("午休", DAY[1], 13, 0)),
    # a time every day
    ("remind me every day at 9 to stretch", CreateDaily("stretch", 9, 0)),
    ("every weekday at 8:30 remind me to stand up", CreateDaily("stand up", 8, 30, "MON-FRI")),
    ("remind me every weekday at 8:30 to stand up", CreateDaily("stand up", 8, 30, "MON-FRI")),
    (
        "remind me to write the report every Monday at 10am",
        CreateDaily("write the report", 10, 0, "MON"),
    ),
    ("at 7pm every sunday, remind me to plan the week", CreateDaily("plan the week", 19, 0, "SUN")),
    ("每天早上9点提醒我喝水", CreateDaily("喝水", 9, 0)),
    ("每个工作日8点半提醒我站会", CreateDaily("站会", 8, 30, "MON-FRI")),
    ("工作日每天上午8:30提醒我打卡", CreateDaily("打卡", 8, 30, "MON-FRI")),
    ("每周一上午10点提醒我写周报", CreateDaily("写周报", 10, 0, "MON")),
    ("每星期天晚上9点提醒我倒垃圾", CreateDaily("倒垃圾", 21, 0, "SUN")),
    ("提醒我每天晚上10点睡觉", CreateDaily("睡觉", 22, 0)),
    # an interval
    ("remind me every 2 hours to drink water", CreateEvery("drink water", 7200)),
    ("every 30 minutes remind me to look away", CreateEvery("look away", 1800)),
    ("remind me to stretch every hour", CreateEvery("stretch", 3600)),
    ("remind me every day to water the plants", CreateEvery("water the plants", 86400)),
    ("每隔2小时提醒我起来走走", CreateEvery("起来走走", 7200)),
    ("每隔两个小时提醒我喝水", CreateEvery("喝水", 7200)),
    ("每30分钟提醒我眨眼", CreateEvery("眨眼", 1800)),
    ("每小时提醒我一次喝水", CreateEvery("喝水", 3600)),
    ("提醒我每隔十分钟看一下锅", CreateEvery("看一下锅", 600)),
    # pausing, resuming, moving
    ("pause reminder rem-2", SetPaused(ById("rem-2"), paused=True)),
    ("Please resume the reminder rem-2.", SetPaused(ById("rem-2"), paused=False)),
    ("unpause rem-3", SetPaused(ById("rem-3"), paused=False)),
    ("暂停提醒 rem-2", SetPaused(ById("rem-2"), paused=True)),
    ("恢复提醒rem-2", SetPaused(ById("rem-2"), paused=False)),
    ("继续提醒 `rem-2`", SetPaused(ById("rem-2"), paused=False)),
    ("move rem-1 to 10:00", Move(ById("rem-1"), 10, 0)),
    ("move reminder rem-1 to 10am tomorrow", Move(ById("rem-1"), 10, 0, DAY[1])),
    ("reschedule rem-1 to tomorrow at 7:15 pm", Move(ById("rem-1"), 19, 15, DAY[1])),
    ("把 rem-1 改到10点", Move(ById("rem-1"), 10, 0)),
    ("把提醒 rem-1 移到明天下午3点", Move(ById("rem-1"), 15, 0, DAY[1])),
    ("把rem-4推迟到10:30", Move(ById("rem-4"), 10, 30)),
    # about reminders but not understood
    ("remind me to stretch", AskWhen("stretch")),
    ("remind me in 10 seconds", Unclear()),
    ("remind me in 10 seconds to", Unclear()),
    ("remind me in 10 seconds to “ ”", Unclear()),
    ("cancel reminder", Unclear()),
    ("提醒我喝水", AskWhen("喝水")),
    ("remind me at 25:00 tomorrow to sleep", Unclear()),
    ("remind me at 13pm tomorrow to sleep", Unclear()),
    ("remind me every day at 9:75 to stretch", Unclear()),
    ("remind me tomorrow at 9 to", Unclear()),
    ("remind me every 2 hours to “ ”", Unclear()),
    ("remind me every day at 9 to", Unclear()),
    ("move rem-1 to 24:00", Unclear()),
    ("明天上午25点提醒我开会", Unclear()),
    ("每天早上9点提醒我。", Unclear()),
    ("每天下午3点70分提醒我喝水", Unclear()),
    ("每隔2小时提醒我", Unclear()),
    ("明天上午9点提醒我“”", Unclear()),
    ("把 rem-1 改到30点", Unclear()),
    # not about reminders
    ("hello", None),
    ("what can you do?", None),
    ("你好", None),
]


@pytest.mark.parametrize(("text", "intent"), PHRASES)
def test_each_phrasing_is_read_as_its_intent(text: str, intent: Intent | None) -> None:
    assert read_intent(text, CONTEXT) == intent


UNITS: list[tuple[str, int]] = [
    ("1 second", 1),
    ("10 seconds", 10),
    ("10 sec", 10),
    ("10 secs", 10),
    ("10s", 10),
    ("10 s", 10),
    ("a minute", 60),
    ("one minute", 60),
    ("5 minutes", 300),
    ("5 min", 300),
    ("5 mins", 300),
    ("5m", 300),
    ("an hour", 3600),
    ("1 hour", 3600),
    ("2 hours", 7200),
    ("2 hr", 7200),
    ("2 hrs", 7200),
    ("2h", 7200),
    ("a day", 86400),
    ("3 days", 259200),
    ("3d", 259200),
    ("twelve seconds", 12),
    ("Ten Minutes", 600),
]


@pytest.mark.parametrize(("duration", "seconds"), UNITS)
def test_every_english_unit_and_spelling_reads_as_seconds(duration: str, seconds: int) -> None:
    for text in (
        f"remind me in {duration} to stretch",
        f"remind me to stretch in {duration}",
        f"in {duration}, remind me to stretch",
    ):
        assert read_intent(text, CONTEXT) == Create("stretch", seconds), text


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("Remind me in 10s to Stretch!", Create("Stretch", 10)),
        ("please remind me in 3 hrs: drink water", Create("drink water", 10800)),
        ("remind me after 2 hours that the oven is hot", Create("the oven is hot", 7200)),
        ("remind me in 5 mins about lunch", Create("lunch", 300)),
        (
            "remind me to put the bread in the oven in 5 min",
            Create("put the bread in the oven", 300),
        ),
        ('remind me in 1 minute to "breathe"', Create("breathe", 60)),
        ("  remind   me in 1 minute to   breathe  ", Create("breathe", 60)),
        ("remind me in 0 seconds to blink", Unclear()),
    ],
)
def test_casing_punctuation_quotes_and_spacing_are_tolerated(text: str, intent: Intent) -> None:
    assert read_intent(text, CONTEXT) == intent


@pytest.mark.parametrize(
    ("text", "chinese"), [("喝水", True), ("stretch", False), ("⏰ ok", False), ("a 提醒", True)]
)
def test_chinese_is_detected_by_its_ideographs(text: str, chinese: bool) -> None:
    assert has_chinese(text) is chinese


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        # by what the reminder says, or all of them
        ("move the stretch reminder to 5pm", Move(Matching("stretch"), 17, 0)),
        ("move the reminder to call mom to 5pm", Move(Matching("call mom"), 17, 0)),
        ("reschedule my tea reminder to tomorrow at 8", Move(Matching("tea"), 8, 0, DAY[1])),
        ("cancel the water reminder", Delete(Matching("water"))),
        ("delete the reminder about “rent”", Delete(Matching("rent"))),
        ("delete all reminders", Delete(All())),
        ("please delete all of my reminders", Delete(All())),
        ("pause the water reminder", SetPaused(Matching("water"), paused=True)),
        ("resume all reminders", SetPaused(All(), paused=False)),
        ("取消喝水的提醒", Delete(Matching("喝水"))),
        ("把喝水的提醒删除", Delete(Matching("喝水"))),
        ("删除所有提醒", Delete(All())),
        ("删除提醒喝水", Delete(Matching("喝水"))),
        ("暂停喝水的提醒", SetPaused(Matching("喝水"), paused=True)),
        ("把拉伸的提醒改到下午5点", Move(Matching("拉伸"), 17, 0)),
        ("把拉伸的提醒改到明天早上8点", Move(Matching("拉伸"), 8, 0, DAY[1])),
        # listing, in more words
        ("what reminders do I have?", List()),
        ("do I have any reminders?", List()),
        ("我有哪些提醒？", List()),
        ("我有几个提醒", List()),
        # without a time: the demo asks when
        ("remind me to buy milk", AskWhen("buy milk")),
        ("remind me about the dentist", AskWhen("the dentist")),
        ("提醒我买牛奶", AskWhen("买牛奶")),
        ("提醒我下班买牛奶", AskWhen("下班买牛奶")),
        # a greeting before the request, or a when that is not one
        ("hey, remind me to stretch in 10 minutes", Create("stretch", 600)),
        ("remind me in 10 seconds", Unclear()),
        ("move the stretch reminder to the kitchen", Unclear()),
        ("move the stretch reminder to every day at 9", Unclear()),
        ("move my stuff to 5pm", None),
        ("cancel the dentist", None),
        ("pause the music", None),
        ("remind me", Unclear()),
        ("提醒我", Unclear()),
        ("明天上午9点提醒我", Unclear()),
    ],
)
def test_reminders_are_named_by_id_words_or_all_and_a_missing_time_is_asked(
    text: str, intent: Intent | None
) -> None:
    assert read_intent(text, CONTEXT) == intent


def test_the_answer_to_when_completes_the_reminder() -> None:
    assert complete("buy milk", "at 5pm", CONTEXT) == CreateAt("buy milk", None, 17, 0)
    assert complete("买牛奶", "明天", CONTEXT) == CreateAt("买牛奶", DAY[1], 9, 0)
    assert complete("stretch", "in 10 minutes", CONTEXT) == Create("stretch", 600)
    assert complete("stretch", "every day at 9", CONTEXT) == CreateDaily("stretch", 9, 0)
    assert complete("stretch", "every 2 hours", CONTEXT) == CreateEvery("stretch", 7200)
    assert complete("stretch", "list reminders", CONTEXT) is None


@pytest.mark.parametrize("zh", [False, True])
def test_every_example_in_the_help_is_understood(zh: bool) -> None:
    lines = [line[2:] for line in help_text(zh, reminders_enabled=True).splitlines()]
    examples = [
        re.sub(r"\s*[(（].*[)）]$", "", example)  # "(I ask when)" is a note, not words
        for line in lines[1:-1]
        for example in line.split(" · ")
    ]
    assert len(examples) >= 15
    for example in examples:
        intent = read_intent(example, CONTEXT)
        assert intent is not None and not isinstance(intent, Unclear), example


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("rem-4", ById("rem-4")),
        ("that one, rem-4", ById("rem-4")),
        ("the stretch back", Matching("stretch back")),
        ("“stretch legs”", Matching("stretch legs")),
        ("那个喝水", Matching("喝水")),
        ("the", None),
        ("。", None),
    ],
)
def test_the_answer_to_which_one_names_a_reminder_by_id_or_words(
    text: str, target: ById | Matching | None
) -> None:
    assert choose(text) == target
