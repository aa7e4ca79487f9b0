"""Time as the schedule protocol writes it, and lateness as people read it.

Timestamps are UTC ISO-8601 with exactly three fractional digits and `Z`
(`2026-01-01T00:00:10.000Z`), between `0001-01-01T00:00:00.000Z` and
`9999-12-31T23:59:59.999Z`. Each instant has exactly one spelling, so
`format_timestamp(parse_timestamp(text)) == text` for every accepted text.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = [
    "MAX_TIMESTAMP_MS",
    "MIN_TIMESTAMP_MS",
    "format_duration",
    "format_timestamp",
    "parse_timestamp",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NAIVE_EPOCH = datetime(1970, 1, 1)
_EPOCH_DAY = _EPOCH.toordinal()
_DAY_MS = 86_400_000
MIN_TIMESTAMP_MS = (datetime(1, 1, 1, tzinfo=UTC) - _EPOCH) // timedelta(milliseconds=1)
MAX_TIMESTAMP_MS = (datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC) - _EPOCH) // timedelta(
    milliseconds=1
)

# ASCII digits only: `\d` would also take other scripts' digits, which int() accepts.
_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z"
)


def format_timestamp(epoch_ms: int) -> str:
    """The protocol spelling of `epoch_ms`; raise `ValueError` outside the bounds."""
    if not MIN_TIMESTAMP_MS <= epoch_ms <= MAX_TIMESTAMP_MS:
        raise ValueError(f"{epoch_ms} ms is outside the years 0001-9999")
    # A naive datetime's isoformat pads the year to four digits and, to milliseconds,
    # writes exactly three: the spelling itself, in half the time of formatting each field
    # (a storm formats four or five per dispatch).
    moment = _NAIVE_EPOCH + timedelta(0, 0, 0, epoch_ms)
    return moment.isoformat(timespec="milliseconds") + "Z"


def parse_timestamp(text: str) -> int:
    """Epoch milliseconds of a protocol timestamp; raise `ValueError` naming the problem."""
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not a UTC timestamp like 2026-01-01T00:00:10.000Z")
    year, month, day, hour, minute, second, millis = map(int, match.groups())
    try:  # the calendar checks every field; the arithmetic is cheaper than an aware datetime's
        moment = datetime(year, month, day, hour, minute, second)
    except ValueError as error:
        raise ValueError(f"{text!r} is not a valid UTC time: {error}") from None
    days = moment.toordinal() - _EPOCH_DAY
    return days * _DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + millis


def format_duration(milliseconds: int) -> str:
    """A fixed-width-ish duration, rounded down to whole seconds.

    `45s`, `3m 05s`, `2h 03m 04s`, and from one day on `3d 04h 05m` (seconds
    dropped). Negative durations read as `0s`.
    """
    seconds = max(milliseconds, 0) // 1000
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d {hours:02d}h {minutes:02d}m"
    if hours:
        return f"{hours}h {minutes:02d}m {seconds:02d}s"
    if minutes:
        return f"{minutes}m {seconds:02d}s"
    return f"{seconds}s"
