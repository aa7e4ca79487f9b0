from __future__ import annotations

import pytest

from dsh.models.demo.intents import (
    Create,
    Delete,
    Intent,
    List,
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
    # about reminders but not understood
    ("remind me to stretch", Unclear()),
    ("remind me in 10 seconds", Unclear()),
    ("remind me in 10 seconds to", Unclear()),
    ("remind me in 10 seconds to “ ”", Unclear()),
    ("cancel reminder", Unclear()),
    ("提醒我喝水", Unclear()),
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
    ("text", "chinese"), [("喝水", True), ("stretch", False), ("⏰ ok", False), ("a 提醒", True)]
)
def test_chinese_is_detected_by_its_ideographs(text: str, chinese: bool) -> None:
    assert has_chinese(text) is chinese
