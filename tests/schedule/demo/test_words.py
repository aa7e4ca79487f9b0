from __future__ import annotations

import pytest
from pydantic import JsonValue

from dsh_tool_schedule.demo.words import fires_words, rule_words, span, state_word, utc, when


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


@pytest.mark.parametrize(
    ("zone", "shown"),
    [
        ("UTC", "2026-03-29 01:30:00 UTC"),
        ("Europe/Berlin", "2026-03-29 03:30:00 Europe/Berlin (2026-03-29 01:30:00 UTC)"),
        ("Asia/Kolkata", "2026-03-29 07:00:00 Asia/Kolkata (2026-03-29 01:30:00 UTC)"),
        ("Not/AZone", "2026-03-29 01:30:00 UTC"),
    ],
)
def test_a_time_is_said_in_the_zone_with_utc_beside_it(zone: str, shown: str) -> None:
    assert when("2026-03-29T01:30:00.000Z", zone) == shown
    assert when(None, zone) == "null"


@pytest.mark.parametrize(
    ("rule", "english", "chinese"),
    [
        ({"kind": "after", "seconds": 10}, None, None),
        ({"kind": "every", "seconds": 7200}, "every 2 hours", "每隔2小时"),
        ({"kind": "every", "seconds": "x"}, "every 2 hours", "按 cron “”"),
        ({"kind": "cron", "cron": "0 9 * * *"}, "every 2 hours", "每天 09:00"),
        ({"kind": "cron", "cron": "30 8 * * MON-FRI"}, "every 2 hours", "每个工作日 08:30"),
        ({"kind": "cron", "cron": "30 8 * * 1-5"}, "every 2 hours", "每个工作日 08:30"),
        ({"kind": "cron", "cron": "0 10 * * MON"}, "every 2 hours", "每周一 10:00"),
        ({"kind": "cron", "cron": "0 10 * * 0"}, "every 2 hours", "每周日 10:00"),
        (
            {"kind": "cron", "cron": "0 10 * * MON,WED"},
            "every 2 hours",
            "按 cron “0 10 * * MON,WED”",
        ),
        ({"kind": "cron", "cron": "0 10 1 * *"}, "every 2 hours", "按 cron “0 10 1 * *”"),
        ({"kind": "cron", "cron": "*/5 * * * *"}, "every 2 hours", "按 cron “*/5 * * * *”"),
    ],
)
def test_a_recurring_rule_is_said_in_words(
    rule: dict[str, JsonValue], english: str | None, chinese: str | None
) -> None:
    view: dict[str, JsonValue] = {"rule": rule, "ruleText": "every 2 hours"}

    assert rule_words(view, zh=False) == english
    assert rule_words(view, zh=True) == chinese


def test_without_words_from_the_plugin_english_shows_the_rule_as_json() -> None:
    assert rule_words({"rule": {"kind": "every", "seconds": 60}}, zh=False) == (
        '{"kind": "every", "seconds": 60}'
    )
    assert rule_words({"rule": "every"}, zh=False) is None


def test_states_are_translated_and_session_local_has_one_chinese_term() -> None:
    assert [state_word(state, zh=True) for state in ("scheduled", "overdue", "paused")] == [
        "已安排",
        "已到期",
        "已暂停",
    ]
    assert state_word("scheduled", zh=False) == "scheduled"
    assert state_word(None, zh=True) == "null"
    assert fires_words(True, zh=False) != fires_words(False, zh=False)
    assert fires_words(True, zh=True) != fires_words(False, zh=True)


def test_chinese_text_puts_utc_in_full_width_brackets() -> None:
    assert when("2026-03-29T01:30:00.000Z", "Europe/Berlin", zh=True) == (
        "2026-03-29 03:30:00 Europe/Berlin（2026-03-29 01:30:00 UTC）"
    )
