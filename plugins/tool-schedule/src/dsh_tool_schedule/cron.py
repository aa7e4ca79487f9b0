"""Cron rules: standard 5-field expressions evaluated on wall time in a zone.

`cronsim` (a maintained parser and evaluator, see the README for why it and
not `croniter`) reads the fields and walks the matching *wall times* on naive
datetimes; this module turns each wall time into an instant with
`zones.resolve_wall`, so DST follows RFC 5545 rather than Debian cron's
quirks:

- a matching wall time inside a DST gap runs with the offset before the gap
  (`30 2 * * *` in Berlin on the spring-forward day runs at 03:30 CEST);
- a matching wall time inside a fold runs once, at the first of its two
  instants (`30 2 * * *` on the fall-back day runs at 02:30 CEST only);
- two wall times that land on the same instant (02:30 in the gap and 03:30
  after it) are one occurrence.

The occurrences are therefore the sorted set of instants of the matching
wall times. Mapping wall times to instants is monotonic except inside a gap
(a gap wall time lands up to one gap length later), so the iterators below
look back (or ahead) by the size of a DST change that happened within a day
of the instant they start from, and reorder the few gap instants they meet.

`count_between` counts without walking every occurrence (a minute rule
missed for 80 days is 115,000 of them): away from a UTC offset change a
matching day's wall times are its instants shifted by one offset, so a day
counts as many matches as its hours and minutes give (`_Count`); only the
wall times within a few hours of a change are resolved one by one. It relies
on what the zone database shows since 1900: no two offset changes of one
zone are closer than about four days (the walk above assumes one a day).
"""

from __future__ import annotations

import bisect
import calendar
import heapq
import itertools
import re
import threading
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from cronsim import CronSim, CronSimError

from .timefmt import MIN_TIMESTAMP_MS
from .zones import is_gap, offset_ms, resolve_wall, wall_of

__all__ = ["CronError", "CronExpression", "CronSeries", "normalize_cron"]

MAX_CRON_CHARS = 200
_FIELD = re.compile(r"[0-9A-Za-z*/,#?-]+")
_DAY_MS = 26 * 3600 * 1000  # a little more than a day: how far back a DST change can matter
_START = datetime(2000, 1, 1)
_EPOCH = datetime(1970, 1, 1)
_MINUTE_MS = 60_000
_WHOLE_DAY_MS = 24 * 3600 * 1000
_GRID_MS = 48 * 3600 * 1000  # offsets are sampled this far apart: half the ~4 days between changes
_SLACK_MS = 3600 * 1000  # resolved one by one this far around a change, beyond its own size
# The days a count reads (as naive milliseconds), and the instants whose offsets it reads:
# a day inside the years 1-9999, where every zone has an offset (and no DST change).
_FIRST_DAY_MS = (datetime(1, 1, 1) - _EPOCH) // timedelta(milliseconds=1)
_LAST_DAY_MS = (datetime(9999, 12, 31) - _EPOCH) // timedelta(milliseconds=1)
_FIRST_OFFSET_MS = _FIRST_DAY_MS + _WHOLE_DAY_MS
_LAST_OFFSET_MS = _LAST_DAY_MS - _WHOLE_DAY_MS


class CronError(ValueError):
    """A cron expression this plugin does not accept; the message says why."""


def normalize_cron(text: str) -> str:
    """`text` with single spaces between exactly five valid fields; `CronError` otherwise."""
    return CronExpression(text).text


class CronExpression:
    """A valid cron expression, parsed once: its normal `text` (`normalize_cron`) and its
    `fields` as cronsim reads them (their sets and day test are read, the walker never
    advanced, so one can be shared). `CronError` for an expression not accepted."""

    __slots__ = ("fields", "text")

    def __init__(self, text: str) -> None:
        self.text, self.fields = _parse(text)

    def matches(self, wall: datetime) -> bool:
        """Whether the naive `wall` time is one the fields match (a whole minute)."""
        fields = self.fields
        return (
            wall.second == 0
            and wall.microsecond == 0
            and wall.minute in fields.minutes
            and wall.hour in fields.hours
            and wall.month in fields.months
            and fields.match_day(wall.date())
        )


def _parse(text: str) -> tuple[str, CronSim]:
    if len(text) > MAX_CRON_CHARS:
        raise CronError(f"a cron expression has at most {MAX_CRON_CHARS} characters")
    fields = text.split()
    if len(fields) != 5:
        raise CronError(
            f"{text!r} has {len(fields)} fields; a cron expression has exactly five "
            "(minute hour day-of-month month day-of-week) and no seconds field"
        )
    for field in fields:
        if _FIELD.fullmatch(field) is None:
            raise CronError(f"{text!r}: the field {field!r} has characters cron does not use")
    normal = " ".join(fields)
    try:
        return normal, CronSim(normal, _START)
    except CronSimError as error:
        raise CronError(f"{text!r} is not a valid cron expression: {error}") from None


def _walls(expression: str, start: datetime, *, reverse: bool = False) -> Iterator[datetime]:
    """Matching naive wall times from `start` (inclusive), forward or backward."""
    step = timedelta(seconds=1)
    try:
        walker = CronSim(expression, start + step if reverse else start - step, reverse=reverse)
        while True:
            yield next(walker)
    except (StopIteration, OverflowError, ValueError):
        # cronsim gives up after 50 years without a match; datetime ends at years 1 and 9999.
        return


def _in_order(candidates: Iterator[tuple[int, bool]]) -> Iterator[int]:
    """Instants in increasing order, once each, from `(instant, in a gap)` in wall-time order.

    Instants of wall times outside gaps already increase; a gap's instants are
    held until a later instant passes them (or the candidates end).
    """
    pending: list[int] = []
    last: int | None = None
    for instant, in_gap in candidates:
        if in_gap:
            heapq.heappush(pending, instant)
            continue
        while pending and pending[0] < instant:
            early = heapq.heappop(pending)
            if early != last:
                last = early
                yield early
        last = instant
        yield instant
    yield from sorted(set(pending) - {last})


class CronSeries:
    """The occurrences (epoch ms) of one cron expression in one zone.

    `next_after` keeps the walk that gave its last answer: asked next for the
    occurrence after that answer (what a plan asks after each delivery of a
    recurring reminder) it continues that walk instead of parsing the fields
    and walking from the start again. Only one thread continues it at a time;
    another asking meanwhile walks afresh (the answers are the same).
    `occurs_at` walks nothing: it matches one wall time against the fields.
    `expression` may come parsed already (`CronExpression`, e.g. from a
    `CronCache`), so that many series of one expression parse it once.
    """

    __slots__ = ("_cron", "_lock", "_walk", "expression", "zone")

    def __init__(self, expression: str | CronExpression, zone: ZoneInfo) -> None:
        if not isinstance(expression, CronExpression):
            expression = CronExpression(expression)
        self._cron = expression
        self.expression = expression.text
        self.zone = zone
        self._walk: tuple[int, Iterator[int]] | None = None
        self._lock = threading.Lock()

    # -- DST changes near an instant ---------------------------------------

    def _shift(self, epoch_ms: int) -> int:
        """The offset change in the day before `epoch_ms`: > 0 a gap, < 0 a fold."""
        before = max(epoch_ms - _DAY_MS, MIN_TIMESTAMP_MS)
        try:
            return offset_ms(epoch_ms, self.zone) - offset_ms(before, self.zone)
        except ValueError:  # at the edge of representable time: no DST to speak of
            return 0

    def _wall(self, epoch_ms: int) -> datetime:
        return wall_of(epoch_ms, self.zone).replace(fold=0)

    def _instant(self, wall: datetime) -> int | None:
        try:
            return resolve_wall(wall, self.zone)
        except ValueError:
            return None

    # -- the series ----------------------------------------------------------

    def after(self, epoch_ms: int) -> Iterator[int]:
        """The occurrences strictly after `epoch_ms`, in increasing order."""
        # Gap wall times up to one gap before `epoch_ms`'s wall time land after it.
        lookback = timedelta(milliseconds=max(0, self._shift(epoch_ms)))
        try:
            start = self._wall(epoch_ms) - lookback
        except (ValueError, OverflowError):
            return iter(())
        return _in_order(self._candidates(_walls(self.expression, start), epoch_ms))

    def _candidates(self, walls: Iterator[datetime], epoch_ms: int) -> Iterator[tuple[int, bool]]:
        """`(instant, in a gap)` of each matching wall time that lands after `epoch_ms`."""
        for wall in walls:
            instant = self._instant(wall)
            if instant is None:
                return
            if instant > epoch_ms:
                yield instant, is_gap(wall, self.zone)

    def next_after(self, epoch_ms: int) -> int | None:
        """The first occurrence strictly after `epoch_ms`, or None when there is none."""
        if not self._lock.acquire(blocking=False):
            return next(self.after(epoch_ms), None)
        try:
            walk = self._walk
            occurrences = walk[1] if walk is not None and walk[0] == epoch_ms else None
            if occurrences is None:
                occurrences = self.after(epoch_ms)
            following = next(occurrences, None)
            self._walk = None if following is None else (following, occurrences)
            return following
        finally:
            self._lock.release()

    def occurs_at(self, epoch_ms: int) -> bool:
        """Whether `epoch_ms` is an occurrence: the instant of a matching wall time.

        That wall time is `epoch_ms`'s own (unless it is a fold's second pass:
        its wall times are the first pass's instants), or one inside a DST gap
        that ended within the day before, which lands a gap later.
        """
        try:
            wall = wall_of(epoch_ms, self.zone)
        except ValueError:
            return False
        if wall.fold == 0 and self._cron.matches(wall):
            return True
        gap = self._shift(epoch_ms)
        if gap <= 0:
            return False
        early = wall.replace(fold=0) - timedelta(milliseconds=gap)
        return (
            is_gap(early, self.zone)
            and self._cron.matches(early)
            and self._instant(early) == epoch_ms
        )

    def last_at_or_before(self, epoch_ms: int) -> int | None:
        """The latest occurrence at or before `epoch_ms`, or None when there is none."""
        # A fold that ended within a day: wall times up to one fold after ours
        # belong to its first pass, which is earlier.
        lookahead = timedelta(milliseconds=max(0, -self._shift(epoch_ms)))
        try:
            start = self._wall(epoch_ms) + lookahead
        except (ValueError, OverflowError):
            return None
        best: int | None = None
        stop: datetime | None = None
        for wall in _walls(self.expression, start, reverse=True):
            if stop is not None and wall < stop:
                break
            instant = self._instant(wall)
            if instant is None or instant > epoch_ms:
                continue
            best = instant if best is None else max(best, instant)
            if stop is None and not is_gap(wall, self.zone):
                # Gap wall times up to one gap earlier may still land later than this one.
                stop = wall - timedelta(milliseconds=max(0, self._shift(instant)))
        return best

    def count_between(self, start_ms: int, stop_ms: int, limit: int) -> int:
        """How many occurrences lie strictly between `start_ms` and `stop_ms`, up to `limit`.

        Exact below `limit` (`limit` means "`limit` or more"). The work grows
        with the months the range spans (a few steps each, or a few per
        matching day near a DST change), never with the occurrences: 80 days
        of a minute rule take about a millisecond, a century of a daily rule
        about 0.1 s, and a clock set thousands of years ahead seconds.
        """
        if limit <= 0 or stop_ms - start_ms <= 1:
            return 0
        try:
            return _Count(self, start_ms, stop_ms, limit).run()
        except (ValueError, OverflowError):
            # A wall time resolved one by one past the years 1-9999 (no zone has a DST change
            # there today, but tzdata may change): walk the occurrences, as `after` can.
            return self._walk_count(start_ms, stop_ms, limit)

    def _walk_count(self, start_ms: int, stop_ms: int, limit: int) -> int:
        counted = 0
        for instant in self.after(start_ms):
            if instant >= stop_ms or counted == limit:
                break
            counted += 1
        return counted

    def min_spacing_seconds(self) -> int:
        """The shortest wall-clock distance between two matches (at most a day)."""
        fields = self._cron.fields
        minutes = sorted(hour * 60 + minute for hour in fields.hours for minute in fields.minutes)
        gaps = [later - earlier for earlier, later in itertools.pairwise(minutes)]
        gaps.append(minutes[0] + 24 * 60 - minutes[-1])
        return min(gaps) * 60

    def explain(self) -> str:
        """The expression in English words (cronsim's), e.g. `At 09:00 on Monday through Friday`."""
        try:
            return self._cron.fields.explain()
        except Exception:  # an explanation is a nicety: never let it cost a view
            return f"on the cron schedule {self.expression!r}"


def _months(first: date, last: date) -> Iterator[tuple[int, int]]:
    """`(year, month)` from `first`'s month to `last`'s, in order."""
    for index in range(first.year * 12 + first.month - 1, last.year * 12 + last.month):
        yield index // 12, index % 12 + 1


def _naive_ms(wall: datetime) -> int:
    """A naive wall time as milliseconds since 1970-01-01 00:00 on the same wall."""
    return (wall - _EPOCH) // timedelta(milliseconds=1)


def _wall_at(naive_ms: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=naive_ms)


class _Count:
    """One `CronSeries.count_between`: matching days, each counted in one piece or a few.

    Wall times are naive milliseconds (`_naive_ms`); an instant with UTC
    offset `o` has the wall time `instant + o`. Around each offset change `t`
    (from offset `before` to `after`), the wall times in
    `[t + min - slack, t + max + |after - before| + slack)` are resolved one by
    one into a set (a gap's wall times land on the instants of those after it,
    a fold's second pass has none); every other wall time `w` of a matching
    day is the instant `w - o`, `o` the offset of its side of the change,
    and no two of them, nor one of them and one of the set, are one instant.

    The days are read a month at a time with cronsim's own day test
    (`match_day`, once per month shape), and the offset changes by one
    forward sweep of a two-day grid over the months that match (bisected to
    the millisecond where two grid points differ). A month well inside the range
    with no change near it counts in one multiplication. A wall time
    resolved past the years 1-9999 raises (`ValueError`): the caller walks
    instead.
    """

    __slots__ = (
        "exact",
        "found",
        "limit",
        "minutes",
        "months",
        "series",
        "start",
        "stop",
        "swept",
        "walker",
    )

    def __init__(self, series: CronSeries, start_ms: int, stop_ms: int, limit: int) -> None:
        self.series = series
        self.start = start_ms
        self.stop = stop_ms
        self.limit = limit
        self.walker = walker = series._cron.fields
        self.minutes = sorted(h * 60 + m for h in walker.hours for m in walker.minutes)
        # (month, weekday of the 1st, length) → its matching days: at most 12 × 7 × 4 of them
        self.months: dict[tuple[int, int, int], tuple[int, ...]] = {}
        self.found: list[tuple[int, int, int]] = []  # the changes swept, in order
        self.swept: int | None = None  # the grid index the sweep reached
        self.exact: set[int] = set()

    def run(self) -> int:
        counted = 0
        # Wall times within two days of the range's ends may land inside it.
        first = _wall_at(max(self.start - 2 * _WHOLE_DAY_MS, _FIRST_DAY_MS)).date()
        last = _wall_at(min(self.stop + 2 * _WHOLE_DAY_MS, _LAST_DAY_MS)).date()
        size = len(self.minutes)
        for year, month in _months(first, last):
            days = self._month_days(year, month)
            if not days:
                continue
            begin = _naive_ms(datetime(year, month, 1))
            end = begin + calendar.monthrange(year, month)[1] * _WHOLE_DAY_MS
            inside = self.start < begin - 2 * _WHOLE_DAY_MS and end + 2 * _WHOLE_DAY_MS < self.stop
            if inside and not self._changes(begin - 2 * _WHOLE_DAY_MS, end + 3 * _WHOLE_DAY_MS):
                counted += len(days) * size  # every wall time of the month, one instant each
            else:
                for day in days:
                    if first <= date(year, month, day) <= last:
                        counted += self._day(begin + (day - 1) * _WHOLE_DAY_MS)
            if counted + len(self.exact) >= self.limit:
                return self.limit
        return counted + len(self.exact)

    def _month_days(self, year: int, month: int) -> tuple[int, ...]:
        """The days of `year`-`month` that the expression's day and month fields match."""
        walker = self.walker
        if month not in walker.months:
            return ()
        first_weekday, length = calendar.monthrange(year, month)
        key = (month, first_weekday, length)
        days = self.months.get(key)
        if days is None:
            # The day fields depend on a day's number, its weekday and the month's length only.
            days = tuple(d for d in range(1, length + 1) if walker.match_day(date(year, month, d)))
            self.months[key] = days
        return days

    def _day(self, day_ms: int) -> int:
        """The matches of the day at `day_ms` counted by arithmetic; adds the rest to `exact`."""
        changes = self._changes(day_ms - 2 * _WHOLE_DAY_MS, day_ms + 3 * _WHOLE_DAY_MS)
        counted = 0
        cursor, end = day_ms, day_ms + _WHOLE_DAY_MS
        offset = self._offset(day_ms // _GRID_MS)
        for change, before, after in changes:
            low = change + min(before, after) - _SLACK_MS
            high = change + max(before, after) + abs(after - before) + _SLACK_MS
            if high <= cursor:
                offset = after
                continue
            counted += self._plain(day_ms, cursor, min(low, end), before)
            self._resolve(max(low, cursor), min(high, end))
            cursor, offset = max(cursor, high), after
            if cursor >= end:
                return counted
        return counted + self._plain(day_ms, cursor, end, offset)

    def _plain(self, day_ms: int, low: int, high: int, offset: int) -> int:
        """Matches of the day at wall times in `[low, high)` whose instant `w - offset` counts."""
        low = max(low, self.start + offset + 1)
        high = min(high, self.stop + offset)
        if high <= low:
            return 0
        first = -((day_ms - low) // _MINUTE_MS)  # the first whole minute at or after `low`
        past = -((day_ms - high) // _MINUTE_MS)
        return bisect.bisect_left(self.minutes, past) - bisect.bisect_left(self.minutes, first)

    def _resolve(self, low: int, high: int) -> None:
        """Add the instants inside of the matching wall times in `[low, high)` to `exact`."""
        if high <= low:
            return
        series = self.series
        walls = _walls(series.expression, _wall_at(low))
        for wall in itertools.takewhile(lambda wall: _naive_ms(wall) < high, walls):
            instant = resolve_wall(wall, series.zone)
            if self.start < instant < self.stop:
                self.exact.add(instant)

    def _offset(self, index: int) -> int:
        """The UTC offset at grid point `index`, kept a day inside the representable years
        (no DST change sits at their ends)."""
        instant = min(max(index * _GRID_MS, _FIRST_OFFSET_MS), _LAST_OFFSET_MS)
        return offset_ms(instant, self.series.zone)

    def _changes(self, low: int, high: int) -> list[tuple[int, int, int]]:
        """`(instant, offset before, offset after)` of each offset change in `[low, high]`.

        Asked for windows that move forward: the sweep continues where it
        stopped, or jumps ahead (no day in between matched).
        """
        index, stop = low // _GRID_MS, -(-high // _GRID_MS)
        if self.swept is not None:
            index = max(index, self.swept)
        if index < stop:
            before = self._offset(index)
            while index < stop:
                after = self._offset(index + 1)
                if before != after:
                    self.found.append((self._change(index, before), before, after))
                before, index = after, index + 1
            self.swept = index
        found = self.found
        return found[bisect.bisect_left(found, (low,)) : bisect.bisect_left(found, (high + 1,))]

    def _change(self, index: int, before: int) -> int:
        """The first instant after grid point `index` whose offset is not `before`."""
        early, late = index * _GRID_MS, (index + 1) * _GRID_MS
        while late - early > 1:
            middle = (early + late) // 2
            if offset_ms(middle, self.series.zone) == before:
                early = middle
            else:
                late = middle
        return late
