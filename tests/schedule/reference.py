"""Straightforward reference implementations the property tests compare the plugin with.

Nothing here is clever or fast: occurrences are found by walking every wall
minute and matching a small cron subset by hand, and delivery is simulated
one step at a time from the definitions in the plugin README:

- a cron occurrence is a wall minute matching the fields, read in the zone
  with PEP 495's `fold=0` (a gap's wall time with the offset before it, a
  fold's at its first instant); two wall times on one instant are one
  occurrence;
- an `every` occurrence is `first + k × period`;
- at time T a reminder that owes `o` delivers nothing if `o > T`; else the
  occurrences from `o` up to T (and `until`) are due: `latest` delivers the
  last with `missed` = the rest, `skip` the last only if at most `grace` old.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

MINUTE = timedelta(minutes=1)
DOW = {"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}


def _values(field: str, low: int, high: int, names: dict[str, int] | None = None) -> set[int]:
    """`*`, `*/n`, `a`, `a-b`, `a-b/n` and comma lists of those."""
    out: set[int] = set()
    for part in field.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if body == "*":
            start, stop = low, high
        elif "-" in body:
            first, last = body.split("-")
            start, stop = _number(first, names), _number(last, names)
        else:
            start = stop = _number(body, names)
        out.update(range(start, stop + 1, step))
    return out


def _number(text: str, names: dict[str, int] | None) -> int:
    return names[text] if names and text in names else int(text)


@dataclass(frozen=True)
class SimpleCron:
    """`minute hour * * dow` (day-of-month and month stay `*`)."""

    minutes: frozenset[int]
    hours: frozenset[int]
    weekdays: frozenset[int]

    @classmethod
    def parse(cls, expression: str) -> SimpleCron:
        minute, hour, dom, month, dow = expression.split()
        assert (dom, month) == ("*", "*"), "the reference handles only * * there"
        weekdays = {day % 7 for day in _values(dow, 0, 7, DOW)}
        return cls(
            frozenset(_values(minute, 0, 59)), frozenset(_values(hour, 0, 23)), frozenset(weekdays)
        )

    def matches(self, wall: datetime) -> bool:
        return (
            wall.minute in self.minutes
            and wall.hour in self.hours
            and (wall.isoweekday() % 7) in self.weekdays
        )


def epoch_ms(moment: datetime) -> int:
    return int((moment - datetime(1970, 1, 1, tzinfo=UTC)) / timedelta(milliseconds=1))


def cron_occurrences(expression: str, zone: ZoneInfo, start_ms: int, stop_ms: int) -> list[int]:
    """Every occurrence in `[start_ms, stop_ms]`, by walking wall minutes around the window."""
    rule = SimpleCron.parse(expression)
    first = datetime.fromtimestamp(start_ms / 1000, UTC).astimezone(zone).replace(tzinfo=None)
    last = datetime.fromtimestamp(stop_ms / 1000, UTC).astimezone(zone).replace(tzinfo=None)
    wall = first.replace(second=0, microsecond=0, fold=0) - timedelta(hours=26)
    found: set[int] = set()
    while wall <= last + timedelta(hours=26):
        if rule.matches(wall):
            instant = epoch_ms(wall.replace(tzinfo=zone, fold=0))
            if start_ms <= instant <= stop_ms:
                found.add(instant)
        wall += MINUTE
    return sorted(found)


def every_occurrences(first_ms: int, period_ms: int, start_ms: int, stop_ms: int) -> list[int]:
    out = []
    instant = first_ms
    while instant <= stop_ms:
        if instant >= start_ms:
            out.append(instant)
        instant += period_ms
    return out


@dataclass
class ReferenceReminder:
    """One recurring reminder delivered by the definitions (module docstring)."""

    occurrences: list[int]
    """Every occurrence of the rule in the window under test, sorted."""
    owed: int
    misfire: str
    grace_ms: int
    count: int | None = None
    until: int | None = None
    delivered: int = 0
    finished: bool = False
    log: list[tuple[int, int]] = field(default_factory=list)

    def due(self, now_ms: int) -> tuple[int, int] | None:
        """`(occurrence, missed)` to deliver at `now_ms`, or None."""
        if self.finished or self.owed > now_ms:
            return None
        limit = now_ms if self.until is None else min(now_ms, self.until)
        due = [self.owed] + [o for o in self.occurrences if self.owed < o <= limit]
        latest = due[-1]
        if self.misfire == "skip":
            return (latest, 0) if now_ms - latest <= self.grace_ms else None
        return latest, len(due) - 1

    def deliver(self, occurrence: int, missed: int) -> None:
        self.log.append((occurrence, missed))
        self.delivered += 1
        later = [o for o in self.occurrences if o > occurrence]
        if (self.count is not None and self.delivered >= self.count) or not later:
            self.finished = True
            return
        following = later[0]
        if self.until is not None and following > self.until:
            self.finished = True
            return
        self.owed = following
