from __future__ import annotations

import pytest

from dsh_tool_schedule.demo.chinese import read_number
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
    Unclear,
    has_chinese,
    read_intent,
)

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
    ("cancel reminder rem-1", Delete("rem-1")),
    ("delete the reminder rem-12.", Delete("rem-12")),
    ("remove reminder `rem-3`", Delete("rem-3")),
    ("删除提醒 rem-2", Delete("rem-2")),
    ("取消提醒rem-4", Delete("rem-4")),
    # a time on a day
    ("remind me at 9:00 tomorrow to call mum", CreateAt("call mum", 1, 9, 0)),
    ("remind me tomorrow at 9am to call mum", CreateAt("call mum", 1, 9, 0)),
    ("Remind me at 3:30 pm today: pick up the parcel", CreateAt("pick up the parcel", 0, 15, 30)),
    ("remind me to call mum at 9 tomorrow", CreateAt("call mum", 1, 9, 0)),
    ("tomorrow at 12 a.m., remind me to sleep", CreateAt("sleep", 1, 0, 0)),
    ("at 18:45 today remind me to cook", CreateAt("cook", 0, 18, 45)),
    ("明天上午9点提醒我开会", CreateAt("开会", 1, 9, 0)),
    ("明天早上九点提醒我跑步", CreateAt("跑步", 1, 9, 0)),
    ("今天下午3点半提醒我取快递", CreateAt("取快递", 0, 15, 30)),
    ("后天晚上8点30分提醒我看电影", CreateAt("看电影", 2, 20, 30)),
    ("提醒我明天9:00交报告", CreateAt("交报告", 1, 9, 0)),
    ("请在明天中午12点，提醒我吃饭", CreateAt("吃饭", 1, 12, 0)),
    ("明天中午1点提醒我午休", CreateAt("午休", 1, 13, 0)),
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
    ("pause reminder rem-2", SetPaused("rem-2", paused=True)),
    ("Please resume the reminder rem-2.", SetPaused("rem-2", paused=False)),
    ("unpause rem-3", SetPaused("rem-3", paused=False)),
    ("暂停提醒 rem-2", SetPaused("rem-2", paused=True)),
    ("恢复提醒rem-2", SetPaused("rem-2", paused=False)),
    ("继续提醒 `rem-2`", SetPaused("rem-2", paused=False)),
    ("move rem-1 to 10:00", Move("rem-1", 10, 0)),
    ("move reminder rem-1 to 10am tomorrow", Move("rem-1", 10, 0, day=1)),
    ("reschedule rem-1 to tomorrow at 7:15 pm", Move("rem-1", 19, 15, day=1)),
    ("把 rem-1 改到10点", Move("rem-1", 10, 0)),
    ("把提醒 rem-1 移到明天下午3点", Move("rem-1", 15, 0, day=1)),
    ("把rem-4推迟到10:30", Move("rem-4", 10, 30)),
    # about reminders but not understood
    ("remind me to stretch", Unclear()),
    ("remind me in 10 seconds", Unclear()),
    ("remind me in 10 seconds to", Unclear()),
    ("remind me in 10 seconds to “ ”", Unclear()),
    ("cancel reminder", Unclear()),
    ("提醒我喝水", Unclear()),
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
    assert read_intent(text) == intent


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
        assert read_intent(text) == Create("stretch", seconds), text


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
        ("remind me in 0 seconds to blink", Create("blink", 0)),
    ],
)
def test_casing_punctuation_quotes_and_spacing_are_tolerated(text: str, intent: Intent) -> None:
    assert read_intent(text) == intent


@pytest.mark.parametrize(
    ("text", "number"), [("7", 7), ("十", 10), ("十五", 15), ("二十", 20), ("两百零五", 205)]
)
def test_chinese_numerals_read_as_numbers(text: str, number: int) -> None:
    assert read_number(text) == number


@pytest.mark.parametrize(
    ("text", "chinese"), [("喝水", True), ("stretch", False), ("⏰ ok", False), ("a 提醒", True)]
)
def test_chinese_is_detected_by_its_ideographs(text: str, chinese: bool) -> None:
    assert has_chinese(text) is chinese
