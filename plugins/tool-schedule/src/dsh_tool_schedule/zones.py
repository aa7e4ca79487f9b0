"""Time zones and wall times: how `at`/`until` are read and how instants are shown.

A *wall time* is what a clock on the wall in a zone shows (a naive
`datetime`); an *instant* is epoch milliseconds. `resolve_wall` turns a wall
time into an instant the way RFC 5545 does, which is also PEP 495's `fold=0`:

- a wall time that does not exist (a DST gap) is read with the UTC offset in
  force *before* the gap, so 02:30 on a spring-forward day in Berlin (the
  clocks jump from 02:00 to 03:00) is 03:30 CEST;
- a wall time that occurs twice (a DST fold) is the *first* of the two.

`parse_local_time` reads the `at`/`until` argument form
`YYYY-MM-DDTHH:MM[:SS]`, optionally with `Z` or `±HH:MM`, which then wins
over the zone. Zones are IANA names (`zoneinfo`, with `tzdata` where the
system has no zone database).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from dsh import validate_time_zone

from .timefmt import MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, format_timestamp

__all__ = [
    "UTC_ZONE",
    "format_local",
    "instant_of",
    "is_gap",
    "load_zone",
    "offset_ms",
    "parse_local_time",
    "resolve_wall",
    "wall_of",
]

UTC_ZONE = "UTC"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
# ASCII digits only: `\d` would also take other scripts' digits, which int() accepts.
_LOCAL = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?"
)


def load_zone(name: str) -> ZoneInfo:
    """The zone named `name`; `ValueError` naming it when it is not an IANA zone known here."""
    return ZoneInfo(validate_time_zone(name))


def instant_of(moment: datetime) -> int:
    """Epoch milliseconds of an aware `moment`."""
    return (moment - _EPOCH) // _MS


def _in_range(epoch_ms: int) -> int:
    if not MIN_TIMESTAMP_MS <= epoch_ms <= MAX_TIMESTAMP_MS:
        raise ValueError("the time is outside the years 0001-9999")
    return epoch_ms


def resolve_wall(wall: datetime, zone: ZoneInfo) -> int:
    """The instant of the naive `wall` time in `zone` (gaps and folds: module docstring).

    Raises `ValueError` when the instant falls outside the years 0001-9999.
    """
    return _in_range(instant_of(wall.replace(tzinfo=zone, fold=0)))


def _aware(epoch_ms: int, zone: ZoneInfo) -> datetime:
    try:
        return (_EPOCH + epoch_ms * _MS).astimezone(zone)
    except OverflowError:
        raise ValueError("the time is outside the years 0001-9999 in that zone") from None


def wall_of(epoch_ms: int, zone: ZoneInfo) -> datetime:
    """The naive wall time in `zone` at `epoch_ms` (with `fold=1` in a fold's second pass).

    Raises `ValueError` when that wall time is outside the years 0001-9999.
    """
    return _aware(epoch_ms, zone).replace(tzinfo=None)


def is_gap(wall: datetime, zone: ZoneInfo) -> bool:
    """True when the naive `wall` time does not exist in `zone` (a DST gap)."""
    aware = wall.replace(tzinfo=zone, fold=0)
    return aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None, fold=0) != wall.replace(
        fold=0
    )


def offset_ms(epoch_ms: int, zone: ZoneInfo) -> int:
    """The UTC offset of `zone` at the instant `epoch_ms`, in milliseconds.

    Raises `ValueError` when the local time there is outside the years 0001-9999.
    """
    offset = _aware(epoch_ms, zone).utcoffset()
    assert offset is not None, "unreachable: zoneinfo always knows its offset"
    return offset // _MS


def parse_local_time(text: str, zone: ZoneInfo) -> int:
    """The instant that the `at`/`until` argument `text` names, read in `zone`.

    `YYYY-MM-DDTHH:MM[:SS]` is a wall time in `zone`; a trailing `Z` or
    `±HH:MM` is an explicit offset and wins. Raises `ValueError` naming the
    problem (the wrong shape, an impossible date, an offset beyond ±23:59).
    """
    match = _LOCAL.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(
            f"{text!r} is not a time like 2026-01-02T09:00 or 2026-01-02T09:00:00+01:00"
        )
    year, month, day, hour, minute = (int(part) for part in match.groups()[:5])
    second = int(match.group(6) or 0)
    suffix = match.group(7)
    try:
        wall = datetime(year, month, day, hour, minute, second)
    except ValueError as error:
        raise ValueError(f"{text!r} is not a valid time: {error}") from None
    if suffix is None:
        return resolve_wall(wall, zone)
    return _in_range(instant_of(wall.replace(tzinfo=_fixed(suffix, text))))


def _fixed(suffix: str, text: str) -> timezone:
    if suffix == "Z":
        return UTC
    hours, minutes = int(suffix[1:3]), int(suffix[4:6])
    if hours > 23 or minutes > 59:
        raise ValueError(f"{text!r} has an impossible UTC offset {suffix}")
    delta = timedelta(hours=hours, minutes=minutes)
    return timezone(-delta if suffix[0] == "-" else delta)


def format_local(epoch_ms: int, zone: ZoneInfo) -> str:
    """`epoch_ms` as ISO-8601 local time with its offset, e.g. `2026-03-30T09:00:00+02:00`.

    A time whose local date would pass the year 9999 is written in UTC instead.
    """
    try:
        return _aware(epoch_ms, zone).isoformat(timespec="seconds")
    except ValueError:
        return format_timestamp(epoch_ms)
