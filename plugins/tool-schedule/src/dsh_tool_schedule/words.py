"""A record's rule in English words, for the model (frame, tool answers).

- `after`: `once, 10 minutes after it was set`
- `at`: `once at 2026-01-02 09:00 (Europe/Berlin)`
- `every`: `every 2 hours` (`, starting 2026-01-02 09:00 (Europe/Berlin)` with `at`)
- `cron`: cronsim's words, `at 09:00 on Monday through Friday (Europe/Berlin)`

then `, until <local time> (<zone>)` and `, 3 times in all` when set. A
snoozed reminder (`snoozed_ms`) says so: a one-shot is `once, snoozed to
2026-01-02 14:05 (Europe/Berlin)`, a recurring one gets `; next snoozed to
2026-01-02 14:05` after its rule. The browser renders its own bilingual words
from the `rule` object.
"""

from __future__ import annotations

from .cron import CronSeries
from .protocol import AfterRule, AtRule, CronRule, EveryRule, Record
from .zones import format_local, load_zone

__all__ = ["describe_rule", "spell_seconds"]

_UNITS = (("day", 86_400), ("hour", 3_600), ("minute", 60), ("second", 1))


def spell_seconds(seconds: int) -> str:
    """`1 second`, `90 seconds` → `1 minute 30 seconds`, `7200` → `2 hours`, `3 days 4 hours`."""
    parts = []
    rest = seconds
    for name, size in _UNITS:
        amount, rest = divmod(rest, size)
        if amount:
            parts.append(f"{amount} {name}" + ("" if amount == 1 else "s"))
    return " ".join(parts) or "0 seconds"


def _wall(text: str) -> str:
    return text.replace("T", " ", 1)


def describe_rule(record: Record, *, snoozed_ms: int | None = None) -> str:
    """`record`'s rule, ends included, in words (module docstring); `snoozed_ms` is the
    time a snooze moved its next occurrence to (None: not snoozed)."""
    zone = record.time_zone
    if snoozed_ms is not None and not record.recurring:
        return f"once, snoozed to {_minute(snoozed_ms, zone)} ({zone})"
    words = _rule_words(record)
    if snoozed_ms is not None:
        words += f"; next snoozed to {_minute(snoozed_ms, zone)}"
    return words


def _minute(epoch_ms: int, zone: str) -> str:
    """`2026-01-02 14:05`: local wall time to the minute (seconds only when not :00)."""
    wall = _wall(format_local(epoch_ms, load_zone(zone)))[:19]
    return wall[:16] if wall.endswith(":00") else wall


def _rule_words(record: Record) -> str:
    rule = record.rule
    zone = record.time_zone
    if isinstance(rule, AfterRule):
        words = f"once, {spell_seconds(rule.seconds)} after it was set"
    elif isinstance(rule, AtRule):
        words = f"once at {_wall(rule.at)} ({zone})"
    elif isinstance(rule, EveryRule):
        words = f"every {spell_seconds(rule.seconds)}"
        if rule.at is not None:
            words += f", starting {_wall(rule.at)} ({zone})"
    else:
        assert isinstance(rule, CronRule)
        explained = CronSeries(rule.cron, load_zone(zone)).explain()
        words = f"{explained[:1].lower()}{explained[1:]} ({zone})"
    if record.until_ms is not None:
        until = format_local(record.until_ms, load_zone(zone))
        words += f", until {_wall(until)} ({zone})"
    if record.count is not None:
        words += ", once in all" if record.count == 1 else f", {record.count} times in all"
    return words
