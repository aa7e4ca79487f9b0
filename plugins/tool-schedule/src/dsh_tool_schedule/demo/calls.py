"""From an intent to the reminder tool call that carries it out.

The person's clock is what the conversation says: `Context.now_ms` is the
time their latest message was stored and `Context.zone` the zone it came
from (`message/user` `timeZone`, else UTC), so "tomorrow at 9" is a pure
function of the request.

- `Create` → `schedule_create(prompt, after_seconds)`;
- `CreateAt` → `schedule_create(prompt, at="YYYY-MM-DDTHH:MM", time_zone)`
  (no day, or today, at a time already passed is tomorrow: the answer says
  so, `results`);
- `CreateDaily` → `schedule_create(prompt, cron="M H * * DAYS", time_zone)`;
- `CreateEvery` → `schedule_create(prompt, every_seconds)`;
- `List` → `schedule_list()`, `Delete` of an id → `schedule_delete(id)`;
- any other `Delete`, and every `SetPaused` and `Move`, first calls
  `schedule_list()` (an update needs the reminder's current revision, and
  "the water reminder" names it by its words): `matching` picks the listed
  reminders the target means, and `change_arguments` gives the
  `schedule_update` for one of them: `paused`, or the new time —
  a one-shot gets `at` (on its own day, or the next day when that time has
  passed; or the day the person named), a `cron` rule at one time of day
  gets that time, an `every` rule restarts at the next such time.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import JsonValue

from .kinds import (
    All,
    ById,
    Change,
    Create,
    CreateAt,
    CreateDaily,
    CreateEvery,
    Delete,
    List,
    Move,
    SetPaused,
    Target,
)

__all__ = ["Context", "change_arguments", "first_call", "load_zone", "matching"]

UTC_ZONE = "UTC"


def load_zone(name: str | None) -> ZoneInfo:
    """The zone `name`, or UTC when it is missing or not known here."""
    try:
        return ZoneInfo(name or UTC_ZONE)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo(UTC_ZONE)


@dataclass(frozen=True, slots=True)
class Context:
    """The person's clock: when they wrote (epoch ms) and the IANA zone they wrote from."""

    now_ms: int
    zone: str = UTC_ZONE

    @property
    def tz(self) -> ZoneInfo:
        return load_zone(self.zone)

    def local_now(self) -> datetime:
        return datetime.fromtimestamp(self.now_ms / 1000, UTC).astimezone(self.tz)

    def day(self, offset: int) -> date:
        """Today (0), tomorrow (1)… in the person's zone."""
        return self.local_now().date() + timedelta(days=offset)


def _clock_now(context: Context) -> tuple[int, int]:
    now = context.local_now()
    return now.hour, now.minute


def wall(day: date, hour: int, minute: int) -> str:
    """`YYYY-MM-DDTHH:MM`, the form the `at` argument takes."""
    return f"{day.isoformat()}T{hour:02d}:{minute:02d}"


def first_call(
    intent: Create | CreateAt | CreateDaily | CreateEvery | List | Change, context: Context
) -> tuple[str, dict[str, Any]]:
    """The tool call that starts carrying out `intent` (module docstring)."""
    if isinstance(intent, Create):
        return "schedule_create", {"prompt": intent.prompt, "after_seconds": intent.after_seconds}
    if isinstance(intent, CreateAt):
        day = intent.day or context.day(0)
        if day == context.day(0) and (intent.hour, intent.minute) <= _clock_now(context):
            day = context.day(1)  # "today at 8" at 9: the next 8:00 (the answer says so)
        at = wall(day, intent.hour, intent.minute)
        return "schedule_create", {"prompt": intent.prompt, "at": at, "time_zone": context.zone}
    if isinstance(intent, CreateDaily):
        cron = f"{intent.minute} {intent.hour} * * {intent.days}"
        return "schedule_create", {"prompt": intent.prompt, "cron": cron, "time_zone": context.zone}
    if isinstance(intent, CreateEvery):
        return "schedule_create", {"prompt": intent.prompt, "every_seconds": intent.seconds}
    if isinstance(intent, Delete) and isinstance(intent.target, ById):
        return "schedule_delete", {"id": intent.target.id}
    return "schedule_list", {}


def matching(target: Target, views: list[JsonValue]) -> list[dict[str, JsonValue]]:
    """The listed reminders `target` means: its id, all, or each whose prompt has its words."""
    found = [view for view in views if isinstance(view, dict)]
    if isinstance(target, All):
        return found
    if isinstance(target, ById):
        return [view for view in found if view.get("id") == target.id]
    words = target.words.casefold().split()
    return [
        view
        for view in found
        if all(word in str(view.get("prompt", "")).casefold() for word in words)
    ]


def change_arguments(
    intent: SetPaused | Move, view: dict[str, JsonValue], context: Context
) -> dict[str, Any] | None:
    """The `schedule_update` arguments for `view`, or None when the demo cannot move that rule."""
    arguments: dict[str, Any] = {"id": view.get("id"), "revision": view.get("revision")}
    if not isinstance(intent, Move):
        return {**arguments, "paused": intent.paused}
    rule = view.get("rule")
    kind = rule.get("kind") if isinstance(rule, dict) else None
    if kind in ("after", "at"):
        at = _one_shot_time(intent, view.get("nextAt"), context)
        return {**arguments, "at": at, "time_zone": context.zone}
    if kind == "cron" and isinstance(rule, dict):
        fields = str(rule.get("cron", "")).split()
        if len(fields) == 5 and fields[0].isdigit() and fields[1].isdigit():
            cron = " ".join([str(intent.minute), str(intent.hour), *fields[2:]])
            return {**arguments, "cron": cron, "time_zone": context.zone}
        return None
    if kind == "every" and isinstance(rule, dict):
        at = _next_time(intent, context.day(0), context)
        return {
            **arguments,
            "every_seconds": rule.get("seconds"),
            "at": at,
            "time_zone": context.zone,
        }
    return None


def _one_shot_time(intent: Move, next_at: JsonValue, context: Context) -> str:
    if intent.day is not None:
        return wall(intent.day, intent.hour, intent.minute)
    own = context.day(0)
    if isinstance(next_at, str):
        with contextlib.suppress(ValueError):  # not a time: the reminder's day is unknown
            own = datetime.fromisoformat(next_at).astimezone(context.tz).date()
    return _next_time(intent, own, context)


def _next_time(intent: Move, start: date, context: Context) -> str:
    """The first `intent` time on `start` or a later day that is still ahead of now."""
    day = max(start, context.day(0))
    now = context.local_now()
    while (
        datetime(day.year, day.month, day.day, intent.hour, intent.minute, tzinfo=context.tz) <= now
    ):
        day += timedelta(days=1)
    return wall(day, intent.hour, intent.minute)
