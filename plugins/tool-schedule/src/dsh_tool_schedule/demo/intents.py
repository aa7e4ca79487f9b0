"""What the demo model understands: reminder requests in English and Chinese.

`read_intent(text, context)` turns one user message into an `Intent`; the
times in it are `when`'s (dateparser under a small grammar). The shapes:

- a reminder: `remind me <when> to <prompt>`, `remind me to <prompt> <when>`,
  `<when>, remind me to <prompt>`; `<when>提醒我<prompt>`, `提醒我<when><prompt>`
  → `Create`, `CreateAt`, `CreateDaily` or `CreateEvery` by the kind of time;
  without a time (`remind me to buy milk`, `提醒我买牛奶`) → `AskWhen`, and
  `complete` reads the answer to "when?" into the reminder;
- `List()`: a message about reminders that asks to see them (`list my
  reminders`, `what reminders do I have?`, `我有哪些提醒？`, `列出提醒`);
- `Delete`, `SetPaused`, `Move` of a `Target`: `rem-3` (`ById`), "all
  reminders" / `所有提醒` (`All`), or what the reminder says (`Matching`):
  `cancel the water reminder`, `move the stretch reminder to 5pm`,
  `取消喝水的提醒`, `把拉伸的提醒改到下午5点`, `暂停提醒 rem-2`;
- `choose(text)` reads the answer to "which one?" when several matched;
- `Unclear()` — it mentions reminders but none of the above reads (or its
  time does not exist, such as 25:00); `None` — anything else.
"""

from __future__ import annotations

import re

from .calls import Context
from .kinds import (
    All,
    AskWhen,
    ById,
    Create,
    CreateAt,
    CreateDaily,
    CreateEvery,
    Delete,
    Intent,
    List,
    Matching,
    Move,
    SetPaused,
    Target,
    Unclear,
)
from .when import After, At, Daily, When, read_when

__all__ = ["choose", "complete", "has_chinese", "read_intent"]

_CHINESE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_REMINDER_LIKE = re.compile(r"\bremind|提醒", re.IGNORECASE)
_QUOTES = "\"'`“”‘’「」"
_TRAILING = " \t.!?。！？~～，,"
_PLEASE = r"(?:please\s+|could you\s+|can you\s+)?"
_ID = re.compile(r"(?<![\w-])rem-\d+\b", re.ASCII)

_EN_REMIND = re.compile(rf"^{_PLEASE}remind me\b\s*(?P<rest>.*)$", re.IGNORECASE)
_EN_WHEN_FIRST = re.compile(rf"^(?P<when>.+?)\s*[,:]?\s+{_PLEASE}remind me\b\s*(?P<rest>.*)$", re.I)
_LINK = re.compile(r"^(?:to|that|about)\s+", re.IGNORECASE)
_LINKS = re.compile(r"\s*[,:]?\s+(?:to|that|about)\s+|\s*[,:]\s+", re.IGNORECASE)
_MARKERS = frozenset({"in", "after", "at", "on", "every", "tomorrow", "today", "next", "this"})

_ZH_REMIND = re.compile(
    r"^请?(?:在)?(?P<when>.*?)[，,\s]*提醒我(?:一下|一次)?[，,\s]*(?P<rest>.*)$"
)
_ZH_TIMEISH = re.compile(
    r"^[\d\s:：\-/年月日号周星期礼拜天今明后上下本这个中早晚凌傍午点时分半钟秒小以之每隔工作"
    r"零一二两三四五六七八九十百]+"
)

_EN_DELETE = re.compile(rf"^{_PLEASE}(?:cancel|delete|remove|clear)\s+(?P<target>.+)$", re.I)
_EN_PAUSE = re.compile(rf"^{_PLEASE}(?P<verb>pause|resume|unpause)\s+(?P<target>.+)$", re.I)
_EN_MOVE = re.compile(rf"^{_PLEASE}(?:move|reschedule|change|push|shift)\s+(?P<rest>.+)$", re.I)
_EN_ALL = re.compile(r"^(?:all|every)(?: of)?(?: my| the)? reminders?$|^everything$", re.I)
_EN_NAMED = re.compile(
    r"^(?:the |my )?(?:(?P<before>.+?) reminders?|reminders?(?: (?:to|about|for|that says)"
    r"(?P<after> .+))?)$",
    re.IGNORECASE,
)
_EN_LIST_START = re.compile(
    r"^(?:please\s+)?(?:list|show|see|view|check|get|what|which|do|any|my|all|reminders?)\b", re.I
)

_ZH_DELETE = re.compile(
    r"^请?(?:删除|取消|删掉|去掉|移除)(?P<target>.+)$"
    r"|^请?把(?P<target2>.+?)(?:删除|取消|删掉|去掉|移除)(?:掉|了)?$"
)
_ZH_PAUSE = re.compile(r"^请?(?P<verb>暂停|恢复|继续)(?P<target>.+)$")
_ZH_MOVE = re.compile(
    r"^请?把(?P<target>.+?)(?:改到|改成|改为|移到|挪到|调到|推迟到|提前到)(?P<when>.+)$"
)
_ZH_ALL = re.compile(r"^(?:所有|全部)的?提醒$")
_ZH_NAMED = re.compile(r"^(?:那个|这个)?(?:(?P<before>.+?)的?提醒|提醒(?P<after>.+))$")
_ZH_LIST = re.compile(r"列出|查看|显示|看看|哪些|什么|所有|全部|我的|列表|几个|多少")


def has_chinese(text: str) -> bool:
    """True when `text` contains a CJK ideograph (the demo then answers in Chinese)."""
    return _CHINESE.search(text) is not None


def read_intent(text: str, context: Context) -> Intent | None:
    """The reminder operation `text` asks for, `Unclear()`, or `None` (not about reminders)."""
    line = " ".join(text.split()).rstrip(_TRAILING)
    intent = _manage(line, context) or _create(line, context) or _list(line)
    if intent is not None:
        return intent
    return Unclear() if _REMINDER_LIKE.search(line) else None


def complete(prompt: str, text: str, context: Context) -> Intent | None:
    """The reminder `prompt` at the time `text` gives (the answer to "when?"), or None."""
    when = read_when(text, context)
    return None if when is None else _creation(prompt, when)


def choose(text: str) -> Target | None:
    """The reminder the answer to "which one?" names: its id, else its words; None if empty."""
    found = _ID.search(text)
    if found is not None:
        return ById(found.group())
    words = _prompt(re.sub(r"^(?:the|that|这个|那个)\s*", "", text.strip(), flags=re.I))
    return None if words is None else Matching(words)


def _creation(prompt: str, when: When) -> Intent:
    if isinstance(when, After):
        return Create(prompt, when.seconds)
    if isinstance(when, At):
        return CreateAt(prompt, when.day, when.hour, when.minute)
    if isinstance(when, Daily):
        return CreateDaily(prompt, when.hour, when.minute, when.days)
    return CreateEvery(prompt, when.seconds)


def _prompt(text: str) -> str | None:
    prompt = _LINK.sub("", text.strip()).strip().rstrip(_TRAILING).strip().strip(_QUOTES).strip()
    return prompt or None


def _create(line: str, context: Context) -> Intent | None:
    english = _EN_REMIND.match(line)
    if english is not None:
        return _english(english["rest"], context)
    first = _EN_WHEN_FIRST.match(line)
    if first is not None:
        when, prompt = read_when(first["when"], context), _prompt(first["rest"])
        if when is None or prompt is None:
            return _english(first["rest"], context)  # "hey, remind me…": not a time
        return _creation(prompt, when)
    chinese = _ZH_REMIND.match(line)
    if chinese is not None:
        return _chinese(chinese["when"], chinese["rest"], context)
    return None


def _english(rest: str, context: Context) -> Intent:
    """`<when> to <prompt>`, `to <prompt> <when>`, or `to <prompt>` (ask when)."""
    if not _LINK.match(rest):
        for link in _LINKS.finditer(rest):
            when = read_when(rest[: link.start()], context)
            prompt = _prompt(rest[link.end() :])
            if when is not None and prompt is not None:
                return _creation(prompt, when)
    words = rest.split()
    for start in range(1, len(words)):
        if words[start].lower() not in _MARKERS:
            continue
        when = read_when(" ".join(words[start:]), context)
        prompt = _prompt(" ".join(words[:start]))
        if when is not None and prompt is not None:
            return _creation(prompt, when)
    prompt = _prompt(rest)
    if prompt is None or not _LINK.match(rest):
        return Unclear()  # "remind me at 25:00 to …": a time, but not one that exists
    return AskWhen(prompt)


def _chinese(before: str, rest: str, context: Context) -> Intent:
    """`<when>提醒我<prompt>`, `提醒我<when><prompt>`, or `提醒我<prompt>` (ask when)."""
    prompt = _prompt(rest)
    if before:
        when = read_when(before, context)
        return Unclear() if when is None or prompt is None else _creation(prompt, when)
    run = _ZH_TIMEISH.match(rest)
    for end in range(len(run.group()) if run else 0, 0, -1):
        when, prompt = read_when(rest[:end], context), _prompt(rest[end:])
        if when is not None and prompt is not None:
            return _creation(prompt, when)
    prompt = _prompt(rest)
    return Unclear() if prompt is None else AskWhen(prompt)


def _manage(line: str, context: Context) -> Intent | None:
    # A verb without a reminder ("cancel the dentist") is not a request to the demo.
    found = _EN_DELETE.match(line) or _ZH_DELETE.match(line)
    # Its one group that matched: `删除<target>` or `把<target>删除`.
    target = None if found is None else _target(next(text for text in found.groups() if text))
    if target is not None:
        return Delete(target)
    found = _EN_PAUSE.match(line) or _ZH_PAUSE.match(line)
    target = None if found is None else _target(found["target"])
    if found is not None and target is not None:
        return SetPaused(target, paused=found["verb"].lower() in ("pause", "暂停"))
    found = _EN_MOVE.match(line)
    if found is not None:
        return _move_english(found["rest"], context)
    found = _ZH_MOVE.match(line)
    return None if found is None else _move(found["target"], found["when"], context)


def _move_english(rest: str, context: Context) -> Intent | None:
    """`<target> to <when>`: the first " to " after which a time reads."""
    found = [
        _move(rest[: link.start()], rest[link.end() :], context)
        for link in re.finditer(r"\s+to\s+", rest, re.IGNORECASE)
    ]
    moves = [intent for intent in found if isinstance(intent, Move)]
    return moves[0] if moves else (Unclear() if any(found) else None)


def _move(target_text: str, when_text: str, context: Context) -> Intent | None:
    """None when `target_text` names no reminder; Unclear when `when_text` is not a time."""
    target, when = _target(target_text), read_when(when_text, context)
    if target is None:
        return None
    return Move(target, when.hour, when.minute, when.day) if isinstance(when, At) else Unclear()


def _target(text: str) -> Target | None:
    """Which reminders: an id, all of them, or those whose prompt has these words."""
    text = text.strip().strip(_QUOTES).strip()
    found = _ID.search(text)
    if found is not None:
        return ById(found.group())
    if _EN_ALL.match(text) or _ZH_ALL.match(text):
        return All()
    named = _EN_NAMED.match(text) or _ZH_NAMED.match(text)
    if named is None:
        return None
    words = (named["before"] or named["after"] or "").strip().strip(_QUOTES).strip()
    return Matching(words) if words else None


def _list(line: str) -> Intent | None:
    english = re.search(r"\breminders?\b", line, re.IGNORECASE)
    if english is not None and _EN_LIST_START.match(line):
        return List()
    if "提醒" in line and "提醒我" not in line and _ZH_LIST.search(line):
        return List()
    return None
