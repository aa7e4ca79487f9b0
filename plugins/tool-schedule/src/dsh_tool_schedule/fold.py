"""The pure fold of a Session's `schedule/change` events.

The fold reads events `[start, end)` — the whole log of a normal Session, or
`[seedLength, end)` of a fork (`Session.fold_start`) — skipping every other
event type. It keeps the active reminders in creation order. It rejects, and
stops at, the first event that the decoder rejects, a `create` that reuses any
id seen in the fold, and a `delete` or `dispatch` of an id that is not active.
A rejection is final (the log is append-only), so a rejected fold stays
rejected and reports the seq and the reason.

`ScheduleFold` is incremental: `advance(events)` folds only the suffix it has
not read yet, and the result always equals a fold of the whole range from
scratch (`ScheduleFold.of(session)`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .ids import ReminderId, format_reminder_id, parse_reminder_id
from .protocol import (
    EVENT_TYPE,
    CreateChange,
    DeleteChange,
    DispatchChange,
    ProtocolError,
    ReminderRecord,
    decode_change,
)

if TYPE_CHECKING:
    from dsh import Session, SessionEvent

__all__ = ["ActiveReminder", "FoldError", "ScheduleFold"]


@dataclass(frozen=True, slots=True)
class FoldError:
    """Why the fold stopped: the offending event's `seq` and the `reason`."""

    seq: int
    reason: str


@dataclass(frozen=True, slots=True)
class ActiveReminder:
    """An active record, its target in epoch ms, and the seq of its `create`."""

    record: ReminderRecord
    due_ms: int
    seq: int

    @property
    def id(self) -> ReminderId:
        return self.record.id


class ScheduleFold:
    """Fold state over one Session's range; feed it the Session's events as they grow."""

    __slots__ = ("_active", "_error", "_highest", "_position", "_seen", "start")

    def __init__(self, start: int = 0) -> None:
        self.start = start
        self._position = start
        self._active: dict[ReminderId, ActiveReminder] = {}
        self._seen: dict[ReminderId, int] = {}
        self._highest = 0
        self._error: FoldError | None = None

    @classmethod
    def of(cls, session: Session) -> ScheduleFold:
        """A fresh fold of `session`'s whole fold range."""
        return cls(session.fold_start).advance(session.events)

    @property
    def position(self) -> int:
        """The seq of the first event not read yet."""
        return self._position

    @property
    def error(self) -> FoldError | None:
        """Why the fold stopped, or None while the log is valid."""
        return self._error

    def advance(self, events: Sequence[SessionEvent]) -> ScheduleFold:
        """Fold `events[position:]` (the same Session's events, grown); returns self."""
        end = len(events)
        if self._error is None and self._position < end:
            for event in events[self._position :]:
                if event.type == EVENT_TYPE:
                    self._error = self._apply(event)
                    if self._error is not None:
                        break
        self._position = max(self._position, end)
        return self

    def reminders(self) -> list[ActiveReminder]:
        """The active reminders in creation order."""
        return list(self._active.values())

    def get(self, reminder_id: str) -> ActiveReminder | None:
        return self._active.get(ReminderId(reminder_id))

    def earliest(self) -> ActiveReminder | None:
        """The active reminder due first (the earlier create breaks a tie)."""
        return min(self._active.values(), key=lambda item: (item.due_ms, item.seq), default=None)

    def next_id(self) -> ReminderId:
        """The id the next `create` uses: one past the highest number seen in the fold.

        Raises `ValueError` once 2^53-1 is taken.
        """
        return format_reminder_id(self._highest + 1)

    def _apply(self, event: SessionEvent) -> FoldError | None:
        try:
            change = decode_change(event.data)
        except ProtocolError as error:
            return FoldError(event.seq, f"invalid schedule/change: {error.reason}")
        if isinstance(change, CreateChange):
            return self._create(change, event.seq)
        return self._finish(change, event.seq)

    def _create(self, change: CreateChange, seq: int) -> FoldError | None:
        record = change.record
        first = self._seen.get(record.id)
        if first is not None:
            return FoldError(seq, f"create reuses id {record.id} (first created at seq {first})")
        self._seen[record.id] = seq
        self._highest = max(self._highest, parse_reminder_id(record.id)[1])
        self._active[record.id] = ActiveReminder(record, record.due_ms, seq)
        return None

    def _finish(self, change: DeleteChange | DispatchChange, seq: int) -> FoldError | None:
        if self._active.pop(change.id, None) is not None:
            return None
        state = "already finished" if change.id in self._seen else "never created in this fold"
        return FoldError(seq, f"{change.change} of {change.id}, which is {state}")
