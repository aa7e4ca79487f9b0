from __future__ import annotations

from typing import Any

import pytest

from dsh_tool_schedule.protocol import Record
from dsh_tool_schedule.timefmt import parse_timestamp
from dsh_tool_schedule.words import describe_rule, spell_seconds

from .logs import record


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (0, "0 seconds"),
        (1, "1 second"),
        (45, "45 seconds"),
        (60, "1 minute"),
        (90, "1 minute 30 seconds"),
        (7200, "2 hours"),
        (86_400, "1 day"),
        (3 * 86_400 + 4 * 3600 + 1, "3 days 4 hours 1 second"),
    ],
)
def test_seconds_are_spelt_in_whole_units(seconds: int, words: str) -> None:
    assert spell_seconds(seconds) == words


def words(**fields: Any) -> str:
    return describe_rule(Record.model_validate(record(**fields)))


def test_each_rule_kind_reads_as_words_naming_the_zone_where_it_matters() -> None:
    assert words(rule={"kind": "after", "seconds": 600}) == "once, 10 minutes after it was set"
    assert words(rule={"kind": "at", "at": "2026-01-02T09:00"}, zone="Europe/Berlin") == (
        "once at 2026-01-02 09:00 (Europe/Berlin)"
    )
    assert words(rule={"kind": "every", "seconds": 7200}) == "every 2 hours"
    assert words(rule={"kind": "every", "seconds": 86_400, "at": "2026-01-02T09:00"}) == (
        "every 1 day, starting 2026-01-02 09:00 (UTC)"
    )
    assert words(rule={"kind": "cron", "cron": "0 9 * * MON-FRI"}, zone="Asia/Kolkata") == (
        "at 09:00 on Monday through Friday (Asia/Kolkata)"
    )


def test_the_ends_of_a_recurring_rule_are_part_of_its_words() -> None:
    until = parse_timestamp("2026-04-01T07:00:00.000Z")
    assert words(
        rule={"kind": "cron", "cron": "30 8 * * *"}, zone="Europe/Berlin", until_ms=until, count=3
    ) == (
        "at 08:30 every day (Europe/Berlin), until 2026-04-01 09:00:00+02:00 (Europe/Berlin), "
        "3 times in all"
    )
    assert words(rule={"kind": "every", "seconds": 60}, count=1) == "every 1 minute, once in all"
