from __future__ import annotations

import subprocess
import sys
from datetime import UTC, date, datetime

import pytest

from dsh_tool_schedule.demo.calls import Context
from dsh_tool_schedule.demo.when import After, At, Daily, Every, When, read_when, to_digits

# Saturday 2026-12-05, 10:00 in Berlin.
NOW = int(datetime(2026, 12, 5, 9, 0, tzinfo=UTC).timestamp() * 1000)
BERLIN = Context(NOW, "Europe/Berlin")

PHRASES: list[tuple[str, When | None]] = [
    # dateparser's days, our clocks
    ("on Friday at 5pm", At(date(2026, 12, 11), 17, 0)),
    ("at 9:00 on 2026-12-25", At(date(2026, 12, 25), 9, 0)),
    ("2026-12-25 9:00", At(date(2026, 12, 25), 9, 0)),
    ("tomorrow at 9", At(date(2026, 12, 6), 9, 0)),
    ("at 3:30 pm today", At(date(2026, 12, 5), 15, 30)),
    ("tomorrow at 12 a.m.", At(date(2026, 12, 6), 0, 0)),
    ("at 12pm", At(None, 12, 0)),
    ("5pm", At(None, 17, 0)),
    ("at 9", At(None, 9, 0)),
    ("tomorrow", At(date(2026, 12, 6), 9, 0)),
    ("星期五 17:00", At(date(2026, 12, 11), 17, 0)),
    ("明天早上8点", At(date(2026, 12, 6), 8, 0)),
    ("明天", At(date(2026, 12, 6), 9, 0)),
    ("后天晚上8点30分", At(date(2026, 12, 7), 20, 30)),
    ("今天下午3点半", At(date(2026, 12, 5), 15, 30)),
    ("明天中午12点", At(date(2026, 12, 6), 12, 0)),
    ("明天中午1点", At(date(2026, 12, 6), 13, 0)),
    ("凌晨12点", At(None, 0, 0)),
    ("下午五点", At(None, 17, 0)),
    ("tonight at 8", At(date(2026, 12, 5), 20, 0)),
    ("at 9:30 tonight", At(date(2026, 12, 5), 21, 30)),
    ("tonight", At(date(2026, 12, 5), 20, 0)),
    ("tonight at 23:00", At(date(2026, 12, 5), 23, 0)),
    ("今晚8点", At(None, 20, 0)),
    # ours: next week's weekday, a month and day
    ("下周五下午5点", At(date(2026, 12, 11), 17, 0)),
    ("这周日", At(date(2026, 12, 6), 9, 0)),
    ("12月25日", At(date(2026, 12, 25), 9, 0)),
    ("1月3号", At(date(2027, 1, 3), 9, 0)),  # passed this year: next year's
    # spans
    ("in 10 minutes", After(600)),
    ("after 2 hours", After(7200)),
    ("in a minute", After(60)),
    ("in ten minutes", After(600)),
    ("10分钟后", After(600)),
    ("十五分钟后", After(900)),
    ("两个小时后", After(7200)),
    ("半小时后", After(1800)),
    ("一百零五秒后", After(105)),
    ("1钟头之后", After(3600)),
    ("30秒钟以后", After(30)),
    # rules
    ("every weekday at 8:30", Daily(8, 30, "MON-FRI")),
    ("every day at 9", Daily(9, 0, "*")),
    ("every mondays at 9", Daily(9, 0, "MON")),
    ("at 7pm every sunday", Daily(19, 0, "SUN")),
    ("every sunday", Daily(9, 0, "SUN")),
    ("每周一早上8点", Daily(8, 0, "MON")),
    ("每天晚上9点", Daily(21, 0, "*")),
    ("每个工作日8点半", Daily(8, 30, "MON-FRI")),
    ("工作日每天上午8:30", Daily(8, 30, "MON-FRI")),
    ("每星期天晚上9点", Daily(21, 0, "SUN")),
    ("每个星期二下午3点", Daily(15, 0, "TUE")),
    ("every 2 hours", Every(7200)),
    ("every hour", Every(3600)),
    ("every an hour", Every(3600)),
    ("every day", Every(86400)),
    ("每隔两个小时", Every(7200)),
    ("每小时", Every(3600)),
    ("每天", Every(86400)),
    ("每2天", Every(172800)),
    # not times
    ("", None),
    (" , ", None),
    ("milk", None),
    ("buy milk", None),
    ("in march", None),  # not the same span from another now
    ("25:00", None),
    ("at 13pm", None),
    ("明天上午25点", None),
    ("every day at 9:75", None),
    ("every fortnight at 9", None),
    ("every at 9", None),
    ("每的", None),
    ("every fortnight", Every(1_209_600)),
    ("下周八", None),
    ("下周天", None),  # dateparser knows 周日, not 周天
    ("in 0 seconds", None),
]


@pytest.mark.parametrize(("phrase", "when"), PHRASES)
def test_each_phrase_reads_as_its_time(phrase: str, when: When | None) -> None:
    assert read_when(phrase, BERLIN) == when


def test_the_same_phrase_reads_the_same_every_time_and_in_the_person_s_zone() -> None:
    tokyo = Context(NOW, "Asia/Tokyo")  # 18:00 on Saturday there
    assert read_when("tomorrow at 9", tokyo) == At(date(2026, 12, 6), 9, 0)
    assert {read_when("on Friday at 5pm", BERLIN) for _ in range(3)} == {
        At(date(2026, 12, 11), 17, 0)
    }
    late = Context(int(datetime(2026, 12, 5, 23, 30, tzinfo=UTC).timestamp() * 1000), "Asia/Tokyo")
    assert read_when("明天", late) == At(date(2026, 12, 7), 9, 0)  # already Sunday there


def test_a_weekday_said_on_that_weekday_is_a_week_later() -> None:
    friday = Context(int(datetime(2026, 12, 4, 9, 0, tzinfo=UTC).timestamp() * 1000), "UTC")
    assert read_when("on Friday at 5pm", friday) == At(date(2026, 12, 11), 17, 0)
    assert read_when("at 5pm", friday) == At(None, 17, 0)  # today's 17:00 is still ahead


def test_a_zone_dateparser_does_not_know_reads_the_person_s_wall_clock_alone() -> None:
    factory = Context(NOW, "Factory")  # zoneinfo has it (as UTC), pytz does not
    assert factory.zone == "Factory"
    assert read_when("in 10 minutes", factory) == After(600)
    assert read_when("tomorrow at 9", factory) == At(date(2026, 12, 6), 9, 0)


def test_chinese_numerals_before_a_unit_become_digits() -> None:
    assert to_digits("十五分钟后") == "15分钟后"
    assert to_digits("两百零五秒后") == "205秒后"
    assert to_digits("二十个小时后") == "20小时后"
    assert to_digits("每周一早上八点") == "每周一早上8点"  # 周一 is a day, not a number


def test_importing_the_plugin_does_not_import_dateparser() -> None:
    code = (
        "import sys, dsh_tool_schedule.plugin, dsh_tool_schedule.demo; "
        "print('dateparser' in sys.modules)"
    )
    checked = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert checked.stdout.strip() == "False"
