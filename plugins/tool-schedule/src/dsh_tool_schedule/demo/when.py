"""When a person wants to be reminded: a phrase in English or Chinese, read into a `When`.

Dates, weekdays and relative times are read by `dateparser` (imported on the
first phrase, so importing the plugin stays fast); on top of it a small
grammar reads what dateparser does not, or reads differently:

1. Clock times are ours: `5pm`, `9:00`, `at 9` (a bare hour only after
   "at"), `下午5点`, `8点半`, `早上8点30分`, `21:00`. Chinese numerals become
   digits first (`十五分钟` is `15分钟`, `半小时` is `30分钟`); `tonight`
   makes a clock an evening one (`tonight at 8` is 20:00).
2. Rules are ours: `every day|weekday|<weekday> at <clock>`, `每天|每个工作日|
   每周一 <clock>` give `Daily` (a cron day-of-week field; the weekday is
   dateparser's); `every 2 hours`, `every hour`, `每隔2小时`, `每天` (no clock)
   give `Every` (the span is dateparser's reading of "in 2 hours").
3. `in|after <span>` and `<span>后` give `After` (seconds from now).
4. Anything else is an optional day and an optional clock: the day is
   dateparser's (`tomorrow`, `on Friday`, `2026-12-25`, `星期五`, `明天`;
   ours: `下周五`, `12月25日`), the clock ours. A day without a clock is
   at 09:00; a clock without a day is `At(day=None)` (today, or tomorrow
   once that time has passed).

Deterministic: dateparser gets the person's wall clock (`Context`) as its
relative base, their zone, `PREFER_DATES_FROM: future`, fixed languages and
no timestamp parser. None means the phrase is not a time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from .calls import Context

__all__ = ["LANGUAGES", "After", "At", "Daily", "Every", "When", "read_when", "to_digits"]

LANGUAGES = ["en", "zh"]
"""Fixed, never detected: the same words read the same way in every conversation."""
_PROBE_SHIFT_MS = 26 * 3_600_000 + 60_000
"""A span reads the same from now and from a day, two hours and a minute later."""
DEFAULT_HOUR = 9
"""A day without a clock (`tomorrow`, `明天`) is at 09:00."""
EVENING_HOUR = 20
"""`tonight` without a clock is at 20:00 (and `tonight at 8` is 20:00)."""


@dataclass(frozen=True, slots=True)
class After:
    seconds: int


@dataclass(frozen=True, slots=True)
class At:
    day: date | None
    """None: no day was said (today, or tomorrow once the time has passed)."""
    hour: int
    minute: int


@dataclass(frozen=True, slots=True)
class Daily:
    hour: int
    minute: int
    days: str = "*"
    """The cron day-of-week field: `*`, `MON-FRI`, `MON`, …"""


@dataclass(frozen=True, slots=True)
class Every:
    seconds: int


When = After | At | Daily | Every

_NUMERAL = "零一二两三四五六七八九十百"
_DIGIT = {char: value for value, char in enumerate("零一二三四五六七八九")} | {"两": 2}
_ZH_NUMBER = re.compile(rf"[{_NUMERAL}]+(?=\s*(?:点|时|分|秒|个|小时|钟头|天|周|月|日|号))")
_PERIOD = r"(?P<period>凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|今晚)?\s*"
_CLOCKS = (
    re.compile(
        r"(?:\bat\s+)?(?<![\d\-/.])(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*"
        r"(?P<ampm>[ap]\.?m\b\.?)",
        re.IGNORECASE,
    ),
    re.compile(
        rf"(?:\bat\s+)?{_PERIOD}(?<![\d\-/.])(?P<hour>\d{{1,2}})\s*[:：]\s*(?P<minute>\d{{2}})"
        r"(?![\d\-/])",
        re.IGNORECASE,
    ),
    re.compile(r"\bat\s+(?P<hour>\d{1,2})(?![\d\-/:.])", re.IGNORECASE),
    re.compile(
        rf"{_PERIOD}(?P<hour>\d{{1,2}})\s*(?:点钟?|时)\s*(?:(?P<half>半)|(?P<minute>\d{{1,2}})\s*分?)?"
    ),
)
_AFTERNOON = ("下午", "傍晚", "晚上", "今晚")
_MORNING = ("凌晨", "早上", "早晨", "上午")
_EN_RULE = re.compile(r"^every\s+(?P<what>.+)$", re.IGNORECASE)
_ZH_RULE = re.compile(r"^(?P<workdays>工作日)?每(?:隔)?\s*(?P<what>.+)$")
_RULE_LAST = re.compile(r"^(?P<clock>.+?)\s*,?\s+(?P<rule>every\s+.+)$", re.IGNORECASE)
_EN_AFTER = re.compile(r"^(?:in|after)\s+\S", re.IGNORECASE)
_ZH_AFTER = re.compile(r"(?:以|之)?后$")
_NEXT_WEEK = re.compile(r"^(?P<which>下|这|本)个?(?P<day>(?:周|星期|礼拜)[一二三四五六日天])$")
_MONTH_DAY = re.compile(r"^(?P<month>\d{1,2})月(?P<day>\d{1,2})[日号]$")
_TONIGHT = re.compile(r"\btonight\b", re.IGNORECASE)
_FILLER = re.compile(r"(?:\b(?:at|on)\b|[,，的])", re.IGNORECASE)
_ZH_UNIT = re.compile(r"(秒钟?|分钟?|个?小时|个?钟头|天|周|星期)$")


def read_when(phrase: str, context: Context) -> When | None:
    """The time `phrase` says, read against the person's clock; None if it is not one."""
    text = " ".join(to_digits(phrase).split()).strip(" ,，。.!！?？")
    if not text:
        return None
    last = _RULE_LAST.match(text)
    if last is not None:  # "at 7pm every sunday"
        text = f"{last['rule']} {last['clock']}"
    rule = _EN_RULE.match(text) or _ZH_RULE.match(text)
    if rule is not None:
        workdays = rule.groupdict().get("workdays") is not None
        return _rule(rule["what"].strip(), context, workdays)
    if _EN_AFTER.match(text) or (_ZH_AFTER.search(text) and not _clock(text)[0]):
        seconds = _span(_ZH_AFTER.sub("后", text), context)
        return None if seconds is None else After(seconds)
    return _at(text, context)


def to_digits(text: str) -> str:
    """Chinese numerals before a unit as digits: 十五分钟 → 15分钟, 两个小时 → 2个小时."""
    text = re.sub(r"半个?(?:小时|钟头)", "30分钟", text)
    text = re.sub(r"个?(?:小时|钟头)", "小时", text)
    return _ZH_NUMBER.sub(lambda found: str(_number(found.group())), text)


def _number(text: str) -> int:
    total = current = 0
    for char in text:
        if char in "十百":
            total += (current or 1) * (10 if char == "十" else 100)
            current = 0
        else:
            current = _DIGIT[char]
    return total + current


def _clock(text: str) -> tuple[tuple[int, int] | None, str]:
    """The first clock time in `text` (24-hour; None if none, or it does not exist)
    and `text` without it."""
    for pattern in _CLOCKS:
        found = pattern.search(text)
        if found is None:
            continue
        rest = (text[: found.start()] + " " + text[found.end() :]).strip()
        return _hour_minute(found), rest
    return None, text


def _hour_minute(found: re.Match[str]) -> tuple[int, int] | None:
    parts = found.groupdict()
    hour = int(parts["hour"])
    minute = 30 if parts.get("half") else int(parts.get("minute") or 0)
    ampm = (parts.get("ampm") or "").replace(".", "").lower()
    period = parts.get("period") or ""
    if ampm and not 1 <= hour <= 12:
        return None
    if (ampm == "pm" or period in _AFTERNOON or (period == "中午" and hour < 11)) and hour < 12:
        hour += 12
    elif (ampm == "am" or period in _MORNING) and hour == 12:
        hour = 0
    return (hour, minute) if hour <= 23 and minute <= 59 else None


def _rule(what: str, context: Context, workdays: bool) -> When | None:
    clock, days = _clock(what)
    days = _FILLER.sub(" ", days).strip()
    if not days or (clock is None and _clock_like(what)):
        return None  # "every at 9", "每的", "every day at 25:00"
    if clock is None:
        return _interval(days, context) or _weekly(days, (DEFAULT_HOUR, 0), context)
    lowered = days.lower()
    if workdays or lowered in ("weekday", "weekdays", "个工作日", "工作日"):
        return Daily(*clock, days="MON-FRI")
    if lowered in ("day", "days", "天", "日"):
        return Daily(*clock, days="*")
    return _weekly(days, clock, context)


def _weekly(days: str, clock: tuple[int, int], context: Context) -> Daily | None:
    """`monday`, `mondays`, `周一`, `个星期二` at `clock`, the weekday being dateparser's."""
    weekday = _date(_singular(days.removeprefix("个")), context)
    return None if weekday is None else Daily(*clock, days=weekday.strftime("%a").upper())


def _interval(span: str, context: Context) -> Every | None:
    """`2 hours`, `hour`, `2小时`, `天`: the interval dateparser reads as "in 2 hours"."""
    if _ZH_UNIT.search(span):
        seconds = _span(f"{span if span[:1].isdigit() else '1' + span}后", context)
    else:
        counted = span.split()[0].isdigit() or span.lower().startswith(("a ", "an "))
        seconds = _span(f"in {span if counted else '1 ' + span}", context)
    return None if seconds is None else Every(seconds)


def _singular(words: str) -> str:
    """`mondays` → `monday`, `hours` → `hours` (dateparser reads plural units itself)."""
    return words[:-1] if words.lower().endswith("days") and words.lower() != "days" else words


def _clock_like(text: str) -> bool:
    return re.search(r"\d\s*(?:点|时|:|：|[ap]\.?m)|\bat\s+\d", text, re.IGNORECASE) is not None


def _at(text: str, context: Context) -> When | None:
    clock, rest = _clock(text)
    if clock is None and _clock_like(text):
        return None  # a time that does not exist, such as 25:00
    if _TONIGHT.search(rest):  # "tonight at 8" is 20:00, "tonight" alone 20:00 too
        rest = _TONIGHT.sub("today", rest)
        hour, minute = clock or (EVENING_HOUR - 12, 0)
        clock = (hour + 12 if hour < 12 else hour, minute)
    rest = " ".join(_FILLER.sub(" ", rest).split())
    if not rest:
        return None if clock is None else At(None, *clock)
    day = _day(rest, context)
    if day is None:
        return None
    return At(day, *(clock or (DEFAULT_HOUR, 0)))


def _day(text: str, context: Context) -> date | None:
    """A day: dateparser's, or `下周五` (the Friday of next week) and `12月25日`, ours."""
    week = _NEXT_WEEK.match(text)
    if week is not None:
        weekday = _date(week["day"], context)
        if weekday is None:
            return None
        today = context.local_now().date()
        monday = today - timedelta(days=today.weekday())
        offset = 7 if week["which"] == "下" else 0
        return monday + timedelta(days=offset + weekday.weekday())
    month_day = _MONTH_DAY.match(text)
    if month_day is not None:
        text = f"{context.local_now().year}-{month_day['month']}-{month_day['day']}"
        found = _date(text, context)
        if found is not None and found < context.local_now().date():
            found = found.replace(year=found.year + 1)
        return found
    return _date(text, context)


def _date(text: str, context: Context) -> date | None:
    moment = _parse(text, context)
    return None if moment is None else moment.date()


def _span(text: str, context: Context) -> int | None:
    """Whole seconds from now to the relative time `text` ("in 2 hours", "2小时后"), if
    later — and the same from another now: "in march" or "in 1 sunday" is not a span."""
    spans = set()
    for shift in (0, _PROBE_SHIFT_MS):
        later = Context(context.now_ms + shift, context.zone)
        moment = _parse(text, later)
        if moment is None:
            return None
        spans.add(round((moment - _base(later)).total_seconds()))
    seconds = spans.pop()
    return seconds if seconds > 0 and not spans else None


def _base(context: Context) -> datetime:
    return context.local_now().replace(tzinfo=None, microsecond=0)


def _parse(text: str, context: Context) -> datetime | None:
    """dateparser's reading of `text` as a naive wall time in the person's zone."""
    # Imported here, not at the top: about 60 ms, only when the demo first reads a time.
    import dateparser

    settings: dict[str, Any] = {
        "RELATIVE_BASE": _base(context),
        "TIMEZONE": context.zone,
        "RETURN_AS_TIMEZONE_AWARE": False,
        "PREFER_DATES_FROM": "future",
        "PARSERS": ["relative-time", "custom-formats", "absolute-time"],
    }
    try:
        moment: datetime | None = dateparser.parse(text, languages=LANGUAGES, settings=settings)
    except KeyError:
        # A zone the system knows but dateparser's (pytz's) does not, such as "Factory":
        # the base is already the person's wall clock, so read it without the zone.
        del settings["TIMEZONE"]
        moment = dateparser.parse(text, languages=LANGUAGES, settings=settings)
    return moment
