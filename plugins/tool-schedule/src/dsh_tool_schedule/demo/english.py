"""The English phrasings the demo model understands (`intents` lists them by intent).

`read(line)` gets one whitespace-normalized line without trailing punctuation
and returns an `Intent`, or None when no English phrasing matches.

A request is "remind me <when> to <prompt>", "remind me to <prompt> <when>"
or "<when>, remind me to <prompt>" (the link word — to, that, about — is
optional, so is a leading please), where <when> is one of:

- in/after a duration: `in 10 seconds`, `after 2 hours`, `in a minute`;
- a time on a day: `at 9:00 tomorrow`, `tomorrow at 9am`, `at 15:30 today`;
- a time every day: `every day at 9`, `every weekday at 8:30`, `every
  monday at 7pm`, `at 9 every day`;
- an interval: `every 2 hours`, `every hour`, `every 30 minutes`.

Durations take a number (digits, "a"/"an"/"one"…"twelve") and a unit:
seconds/minutes/hours/days, singular or plural, or abbreviated (sec, secs, s,
min, mins, m, hr, hrs, h, d). Times are `H`, `H:MM`, with `am`/`pm` (or
`a.m.`/`p.m.`) or on a 24-hour clock.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .kinds import (
    Create,
    CreateAt,
    CreateDaily,
    CreateEvery,
    Delete,
    Intent,
    List,
    Move,
    SetPaused,
    Unclear,
)
from .phrasing import ID, QUOTES, clean_prompt, day_hour, valid_time

__all__ = ["read"]

_COUNTS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_UNITS = {
    "second": 1,
    "sec": 1,
    "s": 1,
    "minute": 60,
    "min": 60,
    "m": 60,
    "hour": 3600,
    "hr": 3600,
    "h": 3600,
    "day": 86400,
    "d": 86400,
}
_DAYS = {
    "day": "*",
    "weekday": "MON-FRI",
    "monday": "MON",
    "tuesday": "TUE",
    "wednesday": "WED",
    "thursday": "THU",
    "friday": "FRI",
    "saturday": "SAT",
    "sunday": "SUN",
}
_ON_DAY = {"today": 0, "tomorrow": 1}

_COUNT = r"\d+|" + "|".join(sorted(_COUNTS, key=len, reverse=True))
_UNIT = r"seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|s|m|h|d"
_DURATION = rf"(?P<count>{_COUNT})\s*(?P<unit>{_UNIT})\b"
_TIME = r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)?"
_DAY = r"(?P<day>today|tomorrow)"
_WEEKLY = r"(?P<days>" + "|".join(_DAYS) + r")s?"

_PLEASE = r"(?:please\s+|could you\s+|can you\s+)?"
_SEPARATOR = r"(?:\s*[,:]\s*|\s+)"
_LINK = r"(?:(?:to|that|about)\s+)?"

Reader = Callable[[re.Match[str]], Intent]


def _shapes(when: str) -> list[re.Pattern[str]]:
    """The three places <when> can stand in a request (module docstring)."""
    return [
        re.compile(rf"^{_PLEASE}remind me {when}{_SEPARATOR}{_LINK}(?P<prompt>.+)$", re.IGNORECASE),
        re.compile(rf"^{_PLEASE}remind me {_LINK}(?P<prompt>.+?),? {when}$", re.IGNORECASE),
        re.compile(rf"^{when}{_SEPARATOR}{_PLEASE}remind me {_LINK}(?P<prompt>.+)$", re.IGNORECASE),
    ]


def _clock(match: re.Match[str]) -> tuple[int, int] | None:
    """The (hour, minute) of a `_TIME` match on a 24-hour clock; None if it does not exist."""
    hour, minute = int(match["hour"]), int(match["minute"] or 0)
    ampm = (match["ampm"] or "").replace(".", "").lower()
    if ampm and not 1 <= hour <= 12:
        return None
    hour = day_hour(hour, afternoon=ampm == "pm", morning=ampm == "am")
    return (hour, minute) if valid_time(hour, minute) else None


def _seconds(match: re.Match[str]) -> int:
    count = _COUNTS.get((match["count"] or "one").lower()) or int(match["count"])
    return count * _UNITS[match["unit"].lower().removesuffix("s") or "s"]


def _after(match: re.Match[str]) -> Intent:
    prompt = clean_prompt(match["prompt"])
    return Unclear() if prompt is None else Create(prompt, _seconds(match))


def _at(match: re.Match[str]) -> Intent:
    prompt, clock = clean_prompt(match["prompt"]), _clock(match)
    if prompt is None or clock is None:
        return Unclear()
    return CreateAt(prompt, _ON_DAY[match["day"].lower()], *clock)


def _daily(match: re.Match[str]) -> Intent:
    prompt, clock = clean_prompt(match["prompt"]), _clock(match)
    if prompt is None or clock is None:
        return Unclear()
    return CreateDaily(prompt, *clock, days=_DAYS[match["days"].lower()])


def _every(match: re.Match[str]) -> Intent:
    prompt = clean_prompt(match["prompt"])
    return Unclear() if prompt is None else CreateEvery(prompt, _seconds(match))


def _move(match: re.Match[str]) -> Intent:
    clock = _clock(match)
    if clock is None:
        return Unclear()
    day = match["day"]
    return Move(match["id"], *clock, day=None if day is None else _ON_DAY[day.lower()])


def _paused(match: re.Match[str]) -> Intent:
    return SetPaused(match["id"], paused=match["verb"].lower() == "pause")


_MANAGE: list[tuple[re.Pattern[str], Reader]] = [
    (
        re.compile(
            r"^(?:please\s+)?(?:cancel|delete|remove)(?: the)? reminder\s+(?P<id>\S+)$",
            re.IGNORECASE,
        ),
        lambda match: Delete(match["id"].strip(QUOTES)),
    ),
    (
        re.compile(
            rf"^(?:please\s+)?(?P<verb>pause|resume|unpause)(?: the)?(?: reminder)?\s+{ID}$",
            re.IGNORECASE,
        ),
        _paused,
    ),
    (
        re.compile(
            rf"^(?:please\s+)?(?:move|reschedule)(?: the)?(?: reminder)?\s+{ID}\s+to\s+"
            rf"(?:at\s+)?{_TIME}(?:\s+{_DAY})?$",
            re.IGNORECASE,
        ),
        _move,
    ),
    (
        re.compile(
            rf"^(?:please\s+)?(?:move|reschedule)(?: the)?(?: reminder)?\s+{ID}\s+to\s+"
            rf"{_DAY}\s+(?:at\s+)?{_TIME}$",
            re.IGNORECASE,
        ),
        _move,
    ),
]
_LIST = [
    re.compile(
        r"^(?:please\s+)?(?:list|show)(?: me)?(?: all)?(?: of)?(?: my| the)? reminders?$",
        re.IGNORECASE,
    ),
    re.compile(r"^(?:what are )?my reminders$", re.IGNORECASE),
    re.compile(r"^reminders$", re.IGNORECASE),
]
# Most specific first: "every day at 9" is a daily time, not an interval of a day.
_CREATE: list[tuple[re.Pattern[str], Reader]] = [
    *((shape, _after) for shape in _shapes(rf"(?:in|after) {_DURATION}")),
    *((shape, _at) for shape in _shapes(rf"at {_TIME} {_DAY}")),
    *((shape, _at) for shape in _shapes(rf"{_DAY} at {_TIME}")),
    *((shape, _daily) for shape in _shapes(rf"every {_WEEKLY} at {_TIME}")),
    *((shape, _daily) for shape in _shapes(rf"at {_TIME} every {_WEEKLY}")),
    *(
        (shape, _every)
        for shape in _shapes(rf"every (?:(?P<count>{_COUNT})\s*)?(?P<unit>{_UNIT})\b")
    ),
]


def read(line: str) -> Intent | None:
    """The intent of an English request, or None (module docstring)."""
    for pattern, reader in _MANAGE:
        match = pattern.match(line)
        if match:
            return reader(match)
    if any(pattern.match(line) for pattern in _LIST):
        return List()
    for pattern, reader in _CREATE:
        match = pattern.match(line)
        if match:
            return reader(match)
    return None
