"""The plugin state of a Session, from its log alone: what the state and wake hooks answer.

- `session_state(log, grace_ms=...)` → `{"reminders": [view, ...]}` (and
  `"firesWhenClosed"`: what the host does with a closed Session's reminders,
  when the caller knows), plus
  `"error": {"code": "schedule_log_invalid", "seq", "message"}` when the fold
  rejects the log (the reminders are then those created before the rejected
  event; none of them is delivered). Expired reminders (`plan`) are not
  listed. It is a pure function of the log: the views are planned *as of the
  log's last event* (`as_of(log)`; its `time`, or the header's `createdAt`
  for an empty log), never at a clock's now, so the host's state frames
  change exactly when the log does and a cold Session reads the same as it
  did when it went cold. A reader with a clock compares `nextAt` with its own
  now (the browser's countdown; `dsh reminders list` passes `now_ms` to plan
  at the time it runs).
- `session_wake_at(log, grace_ms=...)` → the earliest epoch ms at which an
  active, unpaused reminder needs its Session live, or None. No clock is read:
  a `latest` or one-shot reminder needs it at the occurrence it owes; a
  `skip` reminder at its first occurrence that could still be delivered
  after the log's last event (at most `grace_ms` old then), because the
  Session went cold no earlier than that event — older occurrences are
  skipped whenever it wakes. A dispatch without a stored follow-up
  (`ScheduleFold.unanswered()`) needs the Session live at once (the log's
  last event's time): only a live owner queues that follow-up again. A
  rejected log needs nothing.

Both read the log through `SessionLog` (type-filtered scans), so they work on
a cold Session backed by ranged reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import JsonValue

from .fold import Reminder, ScheduleFold
from .plan import plan
from .views import reminder_view

if TYPE_CHECKING:
    from dsh import SessionLog

__all__ = ["as_of", "session_state", "session_wake_at"]


def as_of(log: SessionLog) -> int:
    """The time a log speaks for: its last event's `time`, else the header's `createdAt`."""
    return log.event(len(log) - 1).time if len(log) else log.header.created_at


def session_state(
    log: SessionLog,
    *,
    grace_ms: int,
    now_ms: int | None = None,
    fold: ScheduleFold | None = None,
    fires_when_closed: bool | None = None,
) -> dict[str, JsonValue]:
    """`{"reminders": [...], "firesWhenClosed"?, "error"?: {...}}` for `log` (module docstring).

    The views are planned at `now_ms` when given, else as of the log's last event.
    `fold` is `log`'s whole fold when the caller has it (a `FoldCache`'s).
    `firesWhenClosed`, when `fires_when_closed` is given, is what the host does
    with a closed Session's reminders (`PluginContext.wakes_cold_sessions`):
    what the panel tells the person. A reader without a host (the CLI) has none.
    """
    if fold is None:
        fold = ScheduleFold.of(log)
    if now_ms is None:
        now_ms = as_of(log)
    reminders: list[JsonValue] = []
    for reminder in fold.reminders():
        planned = plan(reminder, now_ms, grace_ms=grace_ms, count_missed=False)
        if not planned.expired:
            reminders.append(reminder_view(reminder, planned))
    state: dict[str, JsonValue] = {"reminders": reminders}
    if fires_when_closed is not None:
        state["firesWhenClosed"] = fires_when_closed
    if fold.error is not None:
        state["error"] = {
            "code": "schedule_log_invalid",
            "seq": fold.error.seq,
            "message": f"the schedule log of this Session is invalid at seq {fold.error.seq}: "
            f"{fold.error.reason}; none of its reminders is delivered",
        }
    return state


def session_wake_at(
    log: SessionLog, *, grace_ms: int, fold: ScheduleFold | None = None
) -> int | None:
    """When the Session next needs to be live for a reminder (module docstring).

    `fold` is `log`'s whole fold when the caller has it (a `FoldCache`'s).
    """
    if fold is None:
        fold = ScheduleFold.of(log)
    if fold.error is not None or len(log) == 0:
        return None
    closed_ms = log.event(len(log) - 1).time
    if fold.unanswered():
        return closed_ms
    wakes = [
        wake
        for reminder in fold.reminders()
        if not reminder.record.paused
        and (wake := _wake(reminder, closed_ms - grace_ms)) is not None
    ]
    return min(wakes, default=None)


def _wake(reminder: Reminder, floor_ms: int) -> int | None:
    owed = reminder.next_ms
    if reminder.record.misfire != "skip" or not reminder.record.recurring or owed >= floor_ms:
        return owed
    return reminder.series.next_after(floor_ms - 1)
