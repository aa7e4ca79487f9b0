"""What the demo model understands: reminder requests in English and Chinese.

`read_intent(text)` turns one user message into an `Intent` (the phrasings
themselves are in `english` and `chinese`):

- `Create(prompt, after_seconds)` — "remind me in 10 seconds to stretch",
  "remind me to call mom in 5 minutes", "10秒后提醒我喝水";
- `CreateAt(prompt, day, hour, minute)` — once at a wall time today (day 0),
  tomorrow (1) or the day after (2): "remind me at 9:00 tomorrow to call mum",
  "明天上午9点提醒我开会";
- `CreateDaily(prompt, hour, minute, days)` — a cron rule, `days` being its
  day-of-week field (`*`, `MON-FRI`, `MON`…): "remind me every day at 9 to
  stretch", "every weekday at 8:30 remind me to stand up", "每天早上9点提醒我喝水";
- `CreateEvery(prompt, seconds)` — "remind me every 2 hours to drink water",
  "每隔2小时提醒我起来走走";
- `List()`, `Delete(id)` — "list reminders", "cancel reminder rem-1", "列出提醒",
  "删除提醒 rem-1";
- `SetPaused(id, paused)` — "pause reminder rem-2", "resume reminder rem-2",
  "暂停提醒 rem-2", "恢复提醒 rem-2";
- `Move(id, hour, minute, day)` — "move rem-1 to 10:00", "move rem-1 to 10am
  tomorrow", "把 rem-1 改到10点";
- `Unclear()` — it mentions reminders but none of the above matched (or a
  time that does not exist, such as 25:00);
- `None` — anything else.
"""

from __future__ import annotations

import re

from . import chinese, english
from .kinds import (
    Change,
    Create,
    CreateAt,
    CreateDaily,
    CreateEvery,
    Creation,
    Delete,
    Intent,
    List,
    Move,
    SetPaused,
    Unclear,
)

__all__ = [
    "Change",
    "Create",
    "CreateAt",
    "CreateDaily",
    "CreateEvery",
    "Creation",
    "Delete",
    "Intent",
    "List",
    "Move",
    "SetPaused",
    "Unclear",
    "has_chinese",
    "read_intent",
]

_CHINESE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_REMINDER_LIKE = re.compile(r"\bremind|提醒", re.IGNORECASE)
_TRAILING = " \t.!?。！？~～"


def has_chinese(text: str) -> bool:
    """True when `text` contains a CJK ideograph (the demo then answers in Chinese)."""
    return _CHINESE.search(text) is not None


def read_intent(text: str) -> Intent | None:
    """The reminder operation `text` asks for, `Unclear()`, or `None` (not about reminders)."""
    line = " ".join(text.split()).rstrip(_TRAILING)
    intent = english.read(line) or chinese.read(line)
    if intent is not None:
        return intent
    return Unclear() if _REMINDER_LIKE.search(line) else None
