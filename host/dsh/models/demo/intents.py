"""What the demo model understands: a few English and Chinese reminder phrasings.

`read_intent(text)` turns one user message into an `Intent`:

- `Create(prompt, after_seconds)` — "remind me in 10 seconds to stretch",
  "remind me to call mom in 5 minutes", "in 2 hours remind me to check the oven",
  "10秒后提醒我喝水", "提醒我5分钟后开会";
- `List()` — "list reminders", "show my reminders", "列出提醒", "我的提醒";
- `Delete(id)` — "cancel reminder rem-1", "删除提醒 rem-1";
- `Unclear()` — it mentions reminders but none of the above matched;
- `None` — anything else.

Durations take a number (digits, "a"/"an"/"one"…"twelve", or Chinese
numerals) and a unit: seconds/minutes/hours/days in full, singular or plural,
or abbreviated (sec, secs, s, min, mins, m, hr, hrs, h, d), or 秒/秒钟,
分/分钟, 小时/钟头 (optionally with 个), 天.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Create",
    "Delete",
    "Intent",
    "List",
    "Unclear",
    "has_chinese",
    "read_intent",
]


@dataclass(frozen=True, slots=True)
class Create:
    prompt: str
    after_seconds: int


@dataclass(frozen=True, slots=True)
class List:
    pass


@dataclass(frozen=True, slots=True)
class Delete:
    id: str


@dataclass(frozen=True, slots=True)
class Unclear:
    pass


Intent = Create | List | Delete | Unclear

_CHINESE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

_EN_COUNTS = {
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
_EN_UNITS = {
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
_CN_UNITS = {"秒": 1, "秒钟": 1, "分": 60, "分钟": 60, "小时": 3600, "钟头": 3600, "天": 86400}
_CN_DIGITS = {
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
_CN_TENS = {"十": 10, "百": 100}

_EN_COUNT = r"\d+|" + "|".join(sorted(_EN_COUNTS, key=len, reverse=True))
_EN_UNIT = r"seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|s|m|h|d"
_EN_DURATION = rf"(?P<count>{_EN_COUNT})\s*(?P<unit>{_EN_UNIT})\b"
_CN_DURATION = (
    r"(?P<count>\d+|[零一二两三四五六七八九十百]+)\s*个?\s*(?P<unit>秒钟|秒|分钟|分|小时|钟头|天)"
)

_PLEASE = r"(?:please\s+|could you\s+|can you\s+)?"
_SEPARATOR = r"(?:\s*[,:]\s*|\s+)"
_LINK = r"(?:(?:to|that|about)\s+)?"
_EN_CREATE = [
    re.compile(
        rf"^{_PLEASE}remind me (?:in|after) {_EN_DURATION}{_SEPARATOR}{_LINK}(?P<prompt>.+)$",
        re.IGNORECASE,
    ),
    re.compile(
        rf"^{_PLEASE}remind me {_LINK}(?P<prompt>.+?),? (?:in|after) {_EN_DURATION}$",
        re.IGNORECASE,
    ),
    re.compile(
        rf"^(?:in|after) {_EN_DURATION}{_SEPARATOR}{_PLEASE}remind me {_LINK}(?P<prompt>.+)$",
        re.IGNORECASE,
    ),
]
_CN_CREATE = [
    re.compile(rf"^请?(?:在)?{_CN_DURATION}(?:以?后|之后)?[，,]?\s*提醒我\s*(?P<prompt>.+)$"),
    re.compile(rf"^请?提醒我\s*{_CN_DURATION}(?:以?后|之后)\s*(?P<prompt>.+)$"),
]
_LIST = [
    re.compile(
        r"^(?:please\s+)?(?:list|show)(?: me)?(?: all)?(?: of)?(?: my| the)? reminders?$",
        re.IGNORECASE,
    ),
    re.compile(r"^(?:what are )?my reminders$", re.IGNORECASE),
    re.compile(r"^reminders$", re.IGNORECASE),
    re.compile(r"^请?(?:列出|查看|显示)(?:所有|全部)?(?:的)?(?:我的)?(?:所有|全部)?提醒(?:列表)?$"),
    re.compile(r"^(?:我的|所有)提醒$|^提醒列表$"),
]
_DELETE = [
    re.compile(
        r"^(?:please\s+)?(?:cancel|delete|remove)(?: the)? reminder\s+(?P<id>\S+)$", re.IGNORECASE
    ),
    re.compile(r"^请?(?:删除|取消)提醒\s*(?P<id>\S+)$"),
]
_REMINDER_LIKE = re.compile(r"\bremind|提醒", re.IGNORECASE)
_LINK_WORDS = frozenset({"to", "that", "about"})
_TRAILING = " \t.!?。！？~～"
_QUOTES = "\"'`“”‘’「」"


def has_chinese(text: str) -> bool:
    """True when `text` contains a CJK ideograph (the demo then answers in Chinese)."""
    return _CHINESE.search(text) is not None


def read_intent(text: str) -> Intent | None:
    """The reminder operation `text` asks for, `Unclear()`, or `None` (not about reminders)."""
    line = " ".join(text.split()).rstrip(_TRAILING)
    for pattern in _DELETE:
        match = pattern.match(line)
        if match:
            return Delete(match["id"].strip(_QUOTES))
    if any(pattern.match(line) for pattern in _LIST):
        return List()
    for pattern in _EN_CREATE:
        match = pattern.match(line)
        if match:
            count = _EN_COUNTS.get(match["count"].lower()) or int(match["count"])
            unit = _EN_UNITS[match["unit"].lower().removesuffix("s") or "s"]
            return _create(match["prompt"], count * unit)
    for pattern in _CN_CREATE:
        match = pattern.match(line)
        if match:
            return _create(match["prompt"], _cn_number(match["count"]) * _CN_UNITS[match["unit"]])
    return Unclear() if _REMINDER_LIKE.search(line) else None


def _create(prompt: str, after_seconds: int) -> Create | Unclear:
    prompt = prompt.strip().rstrip(_TRAILING + "，,").strip().strip(_QUOTES).strip()
    if not prompt or prompt.lower() in _LINK_WORDS:
        return Unclear()
    return Create(prompt, after_seconds)


def _cn_number(text: str) -> int:
    """Digits, or a Chinese numeral such as 十, 十五, 二十, 两百零五."""
    if text.isdigit():
        return int(text)
    total = current = 0
    for char in text:
        if char in _CN_TENS:
            total += (current or 1) * _CN_TENS[char]
            current = 0
        else:
            current = _CN_DIGITS[char]
    return total + current
