"""How the demo model says times, durations, states and rules, in English or Chinese.

Times are said in the person's zone with UTC beside them
(`2026-01-02 09:00:00 Europe/Berlin (2026-01-02 08:00:00 UTC)`; in UTC just
`… UTC`). What a reminder does while its conversation is closed is said
in plain words (`fires_words`), never with the host's terms.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Final

from pydantic import JsonValue

from .calls import load_zone

__all__ = [
    "as_json",
    "fires_words",
    "rule_words",
    "span",
    "state_word",
    "utc",
    "when",
]

_FIRES: Final = {
    (True, False): "It fires even when this conversation is closed.",
    (False, False): "It fires only while this conversation is open.",
    (True, True): "即使关闭这个对话，它也会按时提醒。",
    (False, True): "只有在这个对话打开时，它才会提醒。",
}


def fires_words(fires_when_closed: bool, zh: bool) -> str:
    """Whether a reminder fires while its conversation is closed, as the host really does."""
    return _FIRES[(fires_when_closed, zh)]


_EN_UNITS = ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second"))
_ZH_UNITS = ((86400, "天"), (3600, "小时"), (60, "分钟"), (1, "秒"))
_ZH_STATES = {"scheduled": "已安排", "overdue": "已到期", "paused": "已暂停"}
_ZH_WEEKDAYS = {"MON": "一", "TUE": "二", "WED": "三", "THU": "四", "FRI": "五", "SAT": "六"}
_ZH_WEEKDAYS.update({"SUN": "日", "1": "一", "2": "二", "3": "三", "4": "四", "5": "五"})
_ZH_WEEKDAYS.update({"6": "六", "0": "日", "7": "日"})


def as_json(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def span(seconds: int, zh: bool) -> str:
    """A duration in its largest whole unit: 300 → "5 minutes" / "5分钟"."""
    for size, unit in _ZH_UNITS if zh else _EN_UNITS:
        if seconds % size == 0 and seconds >= size:
            count = seconds // size
            if zh:
                return f"{count}{unit}"
            return f"{count} {unit}" + ("" if count == 1 else "s")
    return f"{seconds}秒" if zh else f"{seconds} seconds"


def _moment(value: JsonValue) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def utc(value: JsonValue) -> str:
    """An ISO-8601 instant as "YYYY-MM-DD HH:MM:SS UTC" (anything else unchanged)."""
    moment = _moment(value)
    if moment is None:
        return value if isinstance(value, str) else as_json(value)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def when(value: JsonValue, zone: str, zh: bool = False) -> str:
    """An instant in `zone` with UTC beside it; in UTC (or unreadable) as `utc` says it."""
    moment = _moment(value)
    tz = load_zone(zone)
    if moment is None or tz.key == "UTC":
        return utc(value)
    local = moment.astimezone(tz).strftime("%Y-%m-%d %H:%M:%S")
    return f"{local} {tz.key}（{utc(value)}）" if zh else f"{local} {tz.key} ({utc(value)})"


def state_word(state: JsonValue, zh: bool) -> str:
    text = state if isinstance(state, str) else as_json(state)
    return _ZH_STATES.get(text, text) if zh else text


def rule_words(view: dict[str, JsonValue], zh: bool) -> str | None:
    """A recurring rule in words (`every 2 hours`, `每天 09:00`); None for a one-shot."""
    rule = view.get("rule")
    if not isinstance(rule, dict) or rule.get("kind") not in ("every", "cron"):
        return None
    if not zh:
        text = view.get("ruleText")
        return text if isinstance(text, str) else as_json(rule)
    seconds = rule.get("seconds")
    if rule.get("kind") == "every" and isinstance(seconds, int):
        return f"每隔{span(seconds, zh=True)}"
    return _cron_words(str(rule.get("cron", "")))


def _cron_words(cron: str) -> str:
    fields = cron.split()
    if len(fields) != 5 or not (fields[0].isdigit() and fields[1].isdigit()):
        return f"按 cron “{cron}”"
    minute, hour, day, month, weekdays = fields
    clock = f"{int(hour):02d}:{int(minute):02d}"
    if (day, month) != ("*", "*"):
        return f"按 cron “{cron}”"
    if weekdays == "*":
        return f"每天 {clock}"
    if weekdays.upper() in ("MON-FRI", "1-5"):
        return f"每个工作日 {clock}"
    name = _ZH_WEEKDAYS.get(weekdays.upper())
    return f"每周{name} {clock}" if name is not None else f"按 cron “{cron}”"
