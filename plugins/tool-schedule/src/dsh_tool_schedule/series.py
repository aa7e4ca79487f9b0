"""The occurrences of a record's rule: pure functions of the record, never of a clock.

- `after` and `at` are one-shots: their only occurrence is the record's
  `nextAt`, so the rule itself has none beyond it.
- `every` is `firstAt + k × seconds` (k ≥ 0): elapsed time, the same in every
  zone, so "every 2 hours" stays two hours apart across a DST change.
- `cron` is `CronSeries` (wall time in the record's zone, RFC 5545 DST rules).

Each series answers `next_after(t)`, `last_at_or_before(t)`, `occurs_at(t)`
(whether t is an occurrence: arithmetic, or one cron wall time matched,
never a walk) and `count_between(a, b)`: the occurrences strictly between, exact up to
`COUNT_CAP` (which then means "that many or more"), counted by arithmetic
rather than by walking them — `every` in closed form, `cron` a month at a
time (`CronSeries.count_between`) — so the cost grows with the span, not
with the occurrences. `Bounded` cuts a series at the record's `until`.
`Following` is a series' next occurrence after an instant, looked up only
when someone asks (what the fold owes after a dispatch). Instants are epoch
milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Protocol

from .cron import CronExpression, CronSeries
from .protocol import Record
from .timefmt import MAX_TIMESTAMP_MS
from .zones import load_zone

__all__ = [
    "COUNT_CAP",
    "Bounded",
    "Every",
    "Following",
    "Never",
    "Series",
    "series_for",
    "series_of",
]

COUNT_CAP: Final = 100_000
"""`count_between` counts at most this many occurrences (a minute rule cold for ~69 days);
a count of `COUNT_CAP` means "`COUNT_CAP` or more"."""


class Series(Protocol):
    def next_after(self, epoch_ms: int) -> int | None: ...

    def last_at_or_before(self, epoch_ms: int) -> int | None: ...

    def occurs_at(self, epoch_ms: int) -> bool: ...

    def count_between(self, start_ms: int, stop_ms: int) -> int: ...


class Never:
    """A one-shot's rule: no occurrence beyond the record's own `nextAt`."""

    __slots__ = ()

    def next_after(self, epoch_ms: int) -> int | None:
        return None

    def last_at_or_before(self, epoch_ms: int) -> int | None:
        return None

    def occurs_at(self, epoch_ms: int) -> bool:
        return False

    def count_between(self, start_ms: int, stop_ms: int) -> int:
        return 0


class Every:
    """`anchor + k × period` for k ≥ 0, up to the latest representable time."""

    __slots__ = ("anchor", "period")

    def __init__(self, anchor_ms: int, period_ms: int) -> None:
        self.anchor = anchor_ms
        self.period = period_ms

    def next_after(self, epoch_ms: int) -> int | None:
        if epoch_ms < self.anchor:
            return self.anchor
        following = self.anchor + ((epoch_ms - self.anchor) // self.period + 1) * self.period
        return following if following <= MAX_TIMESTAMP_MS else None

    def last_at_or_before(self, epoch_ms: int) -> int | None:
        if epoch_ms < self.anchor:
            return None
        return self.anchor + (epoch_ms - self.anchor) // self.period * self.period

    def occurs_at(self, epoch_ms: int) -> bool:
        return (
            self.anchor <= epoch_ms <= MAX_TIMESTAMP_MS
            and (epoch_ms - self.anchor) % self.period == 0
        )

    def count_between(self, start_ms: int, stop_ms: int) -> int:
        first = self.next_after(start_ms)
        if first is None or first >= stop_ms:
            return 0
        return min((stop_ms - 1 - first) // self.period + 1, COUNT_CAP)


class _Cron:
    __slots__ = ("cron",)

    def __init__(self, cron: CronSeries) -> None:
        self.cron = cron

    def next_after(self, epoch_ms: int) -> int | None:
        return self.cron.next_after(epoch_ms)

    def last_at_or_before(self, epoch_ms: int) -> int | None:
        return self.cron.last_at_or_before(epoch_ms)

    def occurs_at(self, epoch_ms: int) -> bool:
        return self.cron.occurs_at(epoch_ms)

    def count_between(self, start_ms: int, stop_ms: int) -> int:
        return self.cron.count_between(start_ms, stop_ms, COUNT_CAP)


class Bounded:
    """`series` without the occurrences after `until_ms` (None: unbounded)."""

    __slots__ = ("series", "until")

    def __init__(self, series: Series, until_ms: int | None) -> None:
        self.series = series
        self.until = until_ms

    def next_after(self, epoch_ms: int) -> int | None:
        following = self.series.next_after(epoch_ms)
        if following is None or (self.until is not None and following > self.until):
            return None
        return following

    def last_at_or_before(self, epoch_ms: int) -> int | None:
        bound = epoch_ms if self.until is None else min(epoch_ms, self.until)
        return self.series.last_at_or_before(bound)

    def occurs_at(self, epoch_ms: int) -> bool:
        return (self.until is None or epoch_ms <= self.until) and self.series.occurs_at(epoch_ms)

    def count_between(self, start_ms: int, stop_ms: int) -> int:
        stop = stop_ms if self.until is None else min(stop_ms, self.until + 1)
        return self.series.count_between(start_ms, stop)


class Following:
    """The first occurrence of `series` after `after_ms` (None: it has none), looked up once,
    when first asked; the series is let go then (what holds a `Following` — a fold's
    unanswered dispatch — does not keep a walk alive).

    Two compare equal when they answer the same. Readers in several threads
    may ask at once: each answer is the same, so the one kept does not matter.
    """

    __slots__ = ("_answer", "_series", "after_ms")

    def __init__(self, series: Series, after_ms: int) -> None:
        self._series: Series | None = series
        self.after_ms = after_ms
        self._answer: int | None = None

    def ms(self) -> int | None:
        """The occurrence (None: there is none)."""
        series = self._series
        if series is not None:
            self._answer = series.next_after(self.after_ms)
            self._series = None
        return self._answer

    def exists(self, hint_ms: int | None = None) -> bool:
        """Whether there is one (`ms()` is not None).

        `hint_ms`, an instant after `after_ms` that may be an occurrence itself
        (a dispatch's), answers without looking for the occurrence when it is
        one: an occurrence up to it exists. A cron series then matches one wall
        time instead of walking its fields from `after_ms`.
        """
        series = self._series
        if (
            series is not None
            and hint_ms is not None
            and hint_ms > self.after_ms
            and series.occurs_at(hint_ms)
        ):
            return True
        return self.ms() is not None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Following) and self.ms() == other.ms()

    def __hash__(self) -> int:
        return hash(self.ms())

    def __repr__(self) -> str:
        return f"Following(after_ms={self.after_ms})"


def series_of(record: Record) -> Bounded:
    """The occurrences of `record`'s rule, cut at its `until`."""
    return series_for(record.rule.to_data(), record.first_ms, record.time_zone, record.until_ms)


def series_for(
    rule: Mapping[str, object],
    first_ms: int,
    zone: str,
    until_ms: int | None,
    cron: CronExpression | None = None,
) -> Bounded:
    """`series_of` from a record's parts: its (valid) rule JSON, `firstAt`, zone and `until`
    (and a cron rule's expression when the caller has it parsed already)."""
    series: Series
    if rule["kind"] == "every":
        seconds = rule["seconds"]
        assert isinstance(seconds, int)
        series = Every(first_ms, seconds * 1000)
    elif rule["kind"] == "cron":
        series = _Cron(CronSeries(cron or str(rule["cron"]), load_zone(zone)))
    else:
        series = Never()
    return Bounded(series, until_ms)
