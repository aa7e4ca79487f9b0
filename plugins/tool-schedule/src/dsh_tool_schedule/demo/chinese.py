"""The Chinese phrasings the demo model understands (`intents` lists them by intent).

`read(line)` gets one whitespace-normalized line without trailing punctuation
and returns an `Intent`, or None when no Chinese phrasing matches.

- after a duration: `10秒后提醒我喝水`, `提醒我5分钟后开会`, `请3天后，提醒我交房租`;
- at a time on a day: `明天上午9点提醒我开会`, `今天下午3点半提醒我取快递`,
  `提醒我明天9:00交报告`;
- at a time every day: `每天早上9点提醒我喝水`, `每个工作日8点半提醒我站会`,
  `每周一上午10点提醒我写周报`;
- at an interval: `每隔2小时提醒我起来走走`, `每30分钟提醒我喝水`, `每小时提醒我…`;
- `列出提醒`, `我的提醒`, `删除提醒 rem-1`, `暂停提醒 rem-2`, `恢复提醒 rem-2`,
  `把 rem-1 改到10点` (also 移到, 挪到, 调到, 推迟到, 提前到; with 明天 etc.).

Numbers are digits or Chinese numerals (十, 十五, 二十, 两百零五); durations
are 秒/秒钟, 分/分钟, 小时/钟头 (optionally with 个), 天; a time is `9点`,
`9点半`, `9点30分`, `9:30`, with 凌晨/早上/上午 (morning), 中午 (noon),
下午/傍晚/晚上 (afternoon and evening) before it.
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

__all__ = ["read", "read_number"]

_UNITS = {"秒": 1, "秒钟": 1, "分": 60, "分钟": 60, "小时": 3600, "钟头": 3600, "天": 86400}
_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_TENS = {"十": 10, "百": 100}
_ON_DAY = {"今天": 0, "明天": 1, "后天": 2}
_WEEKDAYS = {"一": "MON", "二": "TUE", "三": "WED", "四": "THU", "五": "FRI", "六": "SAT"}
_AFTERNOON = frozenset({"下午", "傍晚", "晚上"})
_MORNING = frozenset({"凌晨", "早上", "早晨", "上午"})

_NUMBER = r"\d+|[零一二两三四五六七八九十百]+"
_UNIT = r"秒钟|秒|分钟|分|小时|钟头|天"
_DURATION = rf"(?P<count>{_NUMBER})\s*个?\s*(?P<unit>{_UNIT})"
_PERIOD = r"(?P<period>凌晨|早上|早晨|上午|中午|下午|傍晚|晚上)?"
_CLOCK = (
    rf"{_PERIOD}\s*(?P<hour>\d{{1,2}}|[零一二两三四五六七八九十]{{1,3}})\s*(?:点钟?|:|：)"
    rf"(?:(?P<half>半)|(?P<minute>\d{{1,2}}|[零一二三四五六七八九十]{{1,3}})分?)?"
)
_DAY = r"(?P<day>今天|明天|后天)"
_DAYS = (
    r"(?P<days>每天|每日|每个工作日|工作日每天|工作日"
    r"|每周[一二三四五六日天]|每星期[一二三四五六日天])"
)
_EVERY = rf"每(?:隔)?\s*(?:(?P<count>{_NUMBER})\s*个?)?\s*(?P<unit>{_UNIT})"
_CHANGE_TO = r"(?:改到|改成|移到|挪到|调到|推迟到|提前到)"

Reader = Callable[[re.Match[str]], Intent]


def _shapes(when: str) -> list[re.Pattern[str]]:
    """`<when>提醒我<prompt>` and `提醒我<when><prompt>`."""
    return [
        re.compile(rf"^请?在?\s*{when}[，,]?\s*提醒我(?:一次)?\s*(?P<prompt>.+)$"),
        re.compile(rf"^请?提醒我\s*{when}(?:一次)?[，,]?\s*(?P<prompt>.+)$"),
    ]


def read_number(text: str) -> int:
    """Digits, or a Chinese numeral such as 十, 十五, 二十, 两百零五."""
    if text.isdigit():
        return int(text)
    total = current = 0
    for char in text:
        if char in _TENS:
            total += (current or 1) * _TENS[char]
            current = 0
        else:
            current = _DIGITS[char]
    return total + current


def _clock(match: re.Match[str]) -> tuple[int, int] | None:
    """The (hour, minute) of a `_CLOCK` match on a 24-hour clock; None if it does not exist."""
    hour = read_number(match["hour"])
    minute = 30 if match["half"] else read_number(match["minute"] or "0")
    period = match["period"] or ""
    noon = period == "中午" and hour < 11
    hour = day_hour(hour, afternoon=period in _AFTERNOON or noon, morning=period in _MORNING)
    return (hour, minute) if valid_time(hour, minute) else None


def _seconds(match: re.Match[str]) -> int:
    return read_number(match["count"] or "1") * _UNITS[match["unit"]]


def _after(match: re.Match[str]) -> Intent:
    prompt = clean_prompt(match["prompt"])
    return Unclear() if prompt is None else Create(prompt, _seconds(match))


def _at(match: re.Match[str]) -> Intent:
    prompt, clock = clean_prompt(match["prompt"]), _clock(match)
    if prompt is None or clock is None:
        return Unclear()
    return CreateAt(prompt, _ON_DAY[match["day"]], *clock)


def _daily(match: re.Match[str]) -> Intent:
    prompt, clock = clean_prompt(match["prompt"]), _clock(match)
    if prompt is None or clock is None:
        return Unclear()
    return CreateDaily(prompt, *clock, days=_cron_days(match["days"]))


def _cron_days(days: str) -> str:
    if days in ("每天", "每日"):
        return "*"
    if "工作日" in days:
        return "MON-FRI"
    return _WEEKDAYS.get(days[-1], "SUN")  # 日 and 天 are Sunday


def _every(match: re.Match[str]) -> Intent:
    prompt = clean_prompt(match["prompt"])
    return Unclear() if prompt is None else CreateEvery(prompt, _seconds(match))


def _move(match: re.Match[str]) -> Intent:
    clock = _clock(match)
    if clock is None:
        return Unclear()
    day = match["day"]
    return Move(match["id"], *clock, day=None if day is None else _ON_DAY[day])


_MANAGE: list[tuple[re.Pattern[str], Reader]] = [
    (
        re.compile(r"^请?(?:删除|取消)提醒\s*(?P<id>\S+)$"),
        lambda match: Delete(match["id"].strip(QUOTES)),
    ),
    (
        re.compile(rf"^请?(?P<verb>暂停|恢复|继续)提醒\s*{ID}$"),
        lambda match: SetPaused(match["id"], paused=match["verb"] == "暂停"),
    ),
    (
        re.compile(rf"^请?把\s*(?:提醒)?\s*{ID}\s*{_CHANGE_TO}\s*{_DAY}?\s*{_CLOCK}$"),
        _move,
    ),
]
_LIST = [
    re.compile(r"^请?(?:列出|查看|显示)(?:所有|全部)?(?:的)?(?:我的)?(?:所有|全部)?提醒(?:列表)?$"),
    re.compile(r"^(?:我的|所有)提醒$|^提醒列表$"),
]
# Most specific first: 每天早上9点 is a daily time, 每天 alone an interval of a day.
_CREATE: list[tuple[re.Pattern[str], Reader]] = [
    *((shape, _at) for shape in _shapes(rf"{_DAY}\s*{_CLOCK}")),
    *((shape, _daily) for shape in _shapes(rf"{_DAYS}\s*{_CLOCK}")),
    *((shape, _every) for shape in _shapes(_EVERY)),
    (
        re.compile(rf"^请?(?:在)?{_DURATION}(?:以?后|之后)?[，,]?\s*提醒我\s*(?P<prompt>.+)$"),
        _after,
    ),
    (re.compile(rf"^请?提醒我\s*{_DURATION}(?:以?后|之后)\s*(?P<prompt>.+)$"), _after),
]


def read(line: str) -> Intent | None:
    """The intent of a Chinese request, or None (module docstring)."""
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
