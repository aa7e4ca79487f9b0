"""A delivered reminder as an alert: what the person hears wherever they are.

`reminder_alert(receipt, session_id)` turns the receipt of a dispatch
(`presentation.schedule_reminder_presentation`, so exactly the dispatches
that get a card) into the `dsh_session_alert` answer::

    {"title": "stretch",
     "body": "Due at 09:00 (Europe/Berlin), 12 minutes late; 2 earlier times were missed",
     "tag": "<session id>/rem-1@2026-03-30T07:00:00.000Z"}

- `title` is the prompt (cut to the host's 200 characters);
- `body` says when it was due, in the reminder's zone, and how late it came
  — **the one rule for "overdue"** (docs/DESIGN.md): a delivery at least
  `OVERDUE_AFTER_MS` (one minute) after its occurrence is late and says by
  how much; anything sooner is on time and says nothing about lateness. The
  card in the browser follows the same rule (`OVERDUE_AFTER_MS` there). It
  ends with how many earlier times were missed, if any (`100000 or more`
  at `series.COUNT_CAP`, which stands for that);
- `tag` names the occurrence, so a notification system replaces a repeat of
  the same occurrence rather than stacking it, and two occurrences of one
  recurring reminder are two notifications.

The plugin adds `snooze`: its own `snooze` action on the dispatch's seq, so
a notification elsewhere (a push on a phone) can put the occurrence off as
the card's Snooze does.

The body is English: the host does not know the reader's language, and the
prompt (the part a person wrote) is theirs unchanged.
"""

from __future__ import annotations

from pydantic import JsonValue

from .series import COUNT_CAP
from .timefmt import parse_timestamp
from .words import spell_seconds
from .zones import load_zone, wall_of

__all__ = ["MAX_TITLE", "OVERDUE_AFTER_MS", "reminder_alert"]

#: A delivery at least this late (ms) is overdue (the browser's card uses the same).
OVERDUE_AFTER_MS = 60_000
MAX_TITLE = 200


def reminder_alert(receipt: dict[str, JsonValue], session_id: str) -> dict[str, JsonValue]:
    """The alert of a delivered reminder's receipt (see the module docstring)."""
    prompt = str(receipt["prompt"])
    title = prompt if len(prompt) <= MAX_TITLE else prompt[: MAX_TITLE - 1] + "…"
    occurrence = str(receipt["occurrenceAt"])
    return {
        "title": title,
        "body": _body(receipt),
        "tag": f"{session_id}/{receipt['scheduleId']}@{occurrence}",
    }


def _body(receipt: dict[str, JsonValue]) -> str:
    due_ms = parse_timestamp(str(receipt["occurrenceAt"]))
    zone_name = str(receipt["timeZone"])
    try:
        wall = wall_of(due_ms, load_zone(zone_name))
        due = f"Due at {wall:%H:%M} ({zone_name})"
    except ValueError:  # a zone this host's zone database does not know
        due = f"Due at {receipt['occurrenceAt']}"
    delivered = receipt.get("deliveredAt")
    late_ms = 0 if not isinstance(delivered, str) else parse_timestamp(delivered) - due_ms
    if late_ms >= OVERDUE_AFTER_MS:
        due += f", {spell_seconds(late_ms // 60_000 * 60)} late"
    missed = receipt.get("missed")
    if isinstance(missed, int) and missed > 0:
        if missed >= COUNT_CAP:
            earlier = f"{missed} or more earlier times were"
        else:
            earlier = "1 earlier time was" if missed == 1 else f"{missed} earlier times were"
        due += f"; {earlier} missed"
    return due
