"""One delivery: which due reminders one turn takes, and the follow-up message that carries them.

**Coalescing.** Reminders of one Session due in the same second are delivered
together: one follow-up (one model turn) stands for all of them, one
`dispatch` each (`coalesce`). The first is the due occurrence that came
first (the earlier create breaks a tie), the others are those whose due
occurrence falls in the same wall-clock second, in the same order, at most
`MAX_COALESCED` (a turn whose message holds twenty frames is already long;
the rest go to the next turn).

**The message** (`followup_message`) is the reminder frame of each
(`frame.reminder_frame`), separated by a blank line — a single delivery is
exactly the one frame. Its `source` is the first one's
`{"kind": "schedule", "scheduleId", "occurrenceAt", "missed", "dispatchSeq"}`
and, for several, `"dispatchSeqs"` and `"scheduleIds"` listing every one in
order (`followups.answered_seqs` reads both). A follow-up queued again after
a crash adds `"requeued": true`.

**Re-queued groups** (`requeue_groups`): the dispatches an earlier process
left without a follow-up, grouped as they were delivered — the dispatches of
one delivery are appended one after the other, so a run of consecutive seqs
is one delivery and is queued again as one follow-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from pydantic import JsonValue

from .frame import reminder_frame
from .timefmt import format_timestamp

if TYPE_CHECKING:
    from .fold import Reminder
    from .followups import Unanswered
    from .plan import Due

__all__ = ["MAX_COALESCED", "Part", "coalesce", "followup_message", "requeue_groups"]

MAX_COALESCED: Final = 20


@dataclass(frozen=True, slots=True)
class Part:
    """One reminder of a delivery: its occurrence, what it owes next, and its dispatch's seq."""

    reminder: Reminder
    due: Due
    following_ms: int | None
    dispatch_seq: int


def coalesce(due: list[tuple[int, int, Reminder]]) -> list[Reminder]:
    """The reminders one delivery takes from `due` (`(occurrence_ms, seq, reminder)`, non-empty)."""
    ordered = sorted(due, key=lambda item: item[:2])
    second = ordered[0][0] // 1000
    return [item[2] for item in ordered if item[0] // 1000 == second][:MAX_COALESCED]


def followup_message(
    parts: list[Part], delivered_ms: int, *, fires_when_closed: bool
) -> tuple[str, dict[str, JsonValue]]:
    """The text and `source` of the follow-up delivering `parts` (non-empty) at `delivered_ms`.

    Raises `ValueError` when a time has no spelling (`frame.reminder_frame`).
    """
    text = "\n\n".join(
        reminder_frame(
            part.reminder,
            part.due,
            delivered_ms,
            part.following_ms,
            fires_when_closed=fires_when_closed,
        )
        for part in parts
    )
    first = parts[0]
    source: dict[str, JsonValue] = {
        "kind": "schedule",
        "scheduleId": first.reminder.id,
        "occurrenceAt": format_timestamp(first.due.occurrence_ms),
        "missed": first.due.missed,
        "dispatchSeq": first.dispatch_seq,
    }
    if len(parts) > 1:
        source["dispatchSeqs"] = [part.dispatch_seq for part in parts]
        source["scheduleIds"] = [part.reminder.id for part in parts]
    return text, source


def requeue_groups(items: Sequence[Unanswered]) -> list[list[Unanswered]]:
    """`items` (oldest first) in runs of consecutive dispatch seqs: one delivery each."""
    groups: list[list[Unanswered]] = []
    for item in items:
        if groups and groups[-1][-1].seq + 1 == item.seq:
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups
