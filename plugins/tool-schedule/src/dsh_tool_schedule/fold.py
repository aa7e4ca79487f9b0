"""The pure fold of a Session's `schedule/change` events (v1 and v2).

The fold reads the `schedule/change` events of `[start, end)` — the whole log
of a normal Session, or `[seedLength, end)` of a fork (`SessionLog.fold_start`)
— through `SessionLog.scan(..., types={EVENT_TYPE})`, and keeps the active
reminders in creation order. Its state is exactly what the log says: each
active reminder's current record (and the seq of the create/update that set
it), how many occurrences were delivered since its create, and the occurrence
it owes next — the record's `nextAt` until a dispatch, then the rule's next
occurrence after the last delivered `occurrenceAt`. No clock is read: what is
due at a time T is `plan.plan(reminder, T)`, a separate pure function.

It rejects, and stops at, the first event that:
- the decoder rejects;
- creates an id seen before in the fold;
- updates, deletes or dispatches an id that is not active;
- updates with a revision other than the current one plus one, or with a
  `count` not above the occurrences already delivered;
- dispatches for another record than the current one (`recordSeq`), while
  paused, an occurrence not after the last delivered one, or (v1) a record
  that is not a v1 one-shot.

A one-shot finishes with its dispatch; a recurring record when `count`
occurrences were delivered or its rule has none left before `until`.
A rejection is final (the log is append-only): a rejected fold stays
rejected and reports the seq and the reason.

`ScheduleFold` is incremental: `advance(log)` folds only the suffix it has not
read yet, and the result always equals `ScheduleFold.of(log)` from scratch.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .ids import ReminderId, format_reminder_id, parse_reminder_id
from .protocol import (
    EVENT_TYPE,
    AfterRule,
    ProtocolError,
    Record,
    V1Create,
    V1Delete,
    V1Dispatch,
    V1Record,
    V2Create,
    V2Delete,
    V2Dispatch,
    V2Update,
    decode_change,
)
from .series import Bounded, series_of

if TYPE_CHECKING:
    from dsh import SessionLog

__all__ = ["FoldError", "Reminder", "ScheduleFold", "following_occurrence", "record_of_v1"]

_TYPES = frozenset({EVENT_TYPE})


@dataclass(frozen=True, slots=True)
class FoldError:
    """Why the fold stopped: the offending event's `seq` and the `reason`."""

    seq: int
    reason: str


@dataclass(frozen=True, slots=True)
class Reminder:
    """An active reminder as the log defines it (see the module docstring)."""

    record: Record
    seq: int
    """The seq of the create or update that set `record`."""
    created_seq: int
    delivered: int
    next_ms: int
    """The occurrence owed next: `nextAt`, or the rule's next after the last dispatch."""
    last_ms: int | None
    """The last occurrence delivered under this record, if any."""
    legacy: bool
    """Created by a v1 `create` and never updated."""
    series: Bounded = field(compare=False, repr=False)
    """The record's rule as occurrences (derived from `record`)."""

    @classmethod
    def start(
        cls, record: Record, seq: int, created_seq: int, delivered: int, *, legacy: bool = False
    ) -> Reminder:
        """The state right after the create or update at `seq` that set `record`."""
        return cls(
            record, seq, created_seq, delivered, record.next_ms, None, legacy, series_of(record)
        )

    @property
    def id(self) -> ReminderId:
        return self.record.id


def record_of_v1(record: V1Record) -> Record:
    """A v1 record read as v2: once, `afterSeconds` after it was set, in UTC."""
    return Record(
        id=record.id,
        prompt=record.prompt,
        rule=AfterRule(kind="after", seconds=record.after_seconds),
        timeZone="UTC",
        firstAt=record.scheduled_at,
        nextAt=record.scheduled_at,
        misfire="latest",
        paused=False,
        revision=1,
    )


def following_occurrence(reminder: Reminder, occurrence_ms: int) -> int | None:
    """What `reminder` owes after delivering `occurrence_ms`, or None when that finishes it."""
    if not reminder.record.recurring:
        return None
    count = reminder.record.count
    if count is not None and reminder.delivered + 1 >= count:
        return None
    return reminder.series.next_after(occurrence_ms)


class ScheduleFold:
    """Fold state over one Session's range; feed it the Session's log as it grows."""

    __slots__ = ("_active", "_error", "_highest", "_position", "_seen", "start")

    def __init__(self, start: int = 0) -> None:
        self.start = start
        self._position = start
        self._active: dict[ReminderId, Reminder] = {}
        self._seen: dict[ReminderId, int] = {}
        self._highest = 0
        self._error: FoldError | None = None

    @classmethod
    def of(cls, log: SessionLog, stop: int | None = None) -> ScheduleFold:
        """A fresh fold of `log`'s fold range (up to `stop`, exclusive, when given)."""
        return cls(log.fold_start).advance(log, stop)

    @property
    def position(self) -> int:
        """The seq of the first event not read yet."""
        return self._position

    @property
    def error(self) -> FoldError | None:
        """Why the fold stopped, or None while the log is valid."""
        return self._error

    def advance(self, log: SessionLog, stop: int | None = None) -> ScheduleFold:
        """Fold the `schedule/change` events of `[position, stop or len(log))`; returns self."""
        end = len(log) if stop is None else min(stop, len(log))
        if self._error is None and self._position < end:
            for event in log.scan(self._position, end, types=_TYPES):
                self._error = self._apply(event.seq, event.data)
                if self._error is not None:
                    break
        self._position = max(self._position, end)
        return self

    def reminders(self) -> list[Reminder]:
        """The active reminders in creation order."""
        return list(self._active.values())

    def get(self, reminder_id: str) -> Reminder | None:
        return self._active.get(ReminderId(reminder_id))

    def next_id(self) -> ReminderId:
        """The id the next `create` uses: one past the highest number seen in the fold.

        Raises `ValueError` once 2^53-1 is taken.
        """
        return format_reminder_id(self._highest + 1)

    # -- transitions --------------------------------------------------------

    def _apply(self, seq: int, data: object) -> FoldError | None:
        try:
            change = decode_change(data)  # type: ignore[arg-type]
        except ProtocolError as error:
            return FoldError(seq, f"invalid schedule/change: {error.reason}")
        if isinstance(change, V1Create | V2Create):
            return self._create(change, seq)
        target = change.record.id if isinstance(change, V2Update) else change.id
        reminder = self._active.get(target)
        if reminder is None:
            state = "already finished" if target in self._seen else "never created in this fold"
            return FoldError(seq, f"{change.change} of {target}, which is {state}")
        if isinstance(change, V1Delete | V2Delete):
            del self._active[target]
            return None
        if isinstance(change, V2Update):
            return self._update(reminder, change.record, seq)
        return self._dispatch(reminder, change, seq)

    def _create(self, change: V1Create | V2Create, seq: int) -> FoldError | None:
        v1 = isinstance(change, V1Create)
        record = record_of_v1(change.record) if isinstance(change, V1Create) else change.record
        first = self._seen.get(record.id)
        if first is not None:
            return FoldError(seq, f"create reuses id {record.id} (first created at seq {first})")
        self._seen[record.id] = seq
        self._highest = max(self._highest, parse_reminder_id(record.id)[1])
        self._active[record.id] = Reminder.start(record, seq, seq, 0, legacy=v1)
        return None

    def _update(self, reminder: Reminder, record: Record, seq: int) -> FoldError | None:
        expected = reminder.record.revision + 1
        if record.revision != expected:
            return FoldError(
                seq,
                f"update of {record.id} has revision {record.revision}; "
                f"the next revision is {expected}",
            )
        if record.count is not None and record.count <= reminder.delivered:
            return FoldError(
                seq,
                f"update of {record.id} sets count {record.count}, but "
                f"{reminder.delivered} occurrences were already delivered",
            )
        self._active[record.id] = Reminder.start(
            record, seq, reminder.created_seq, reminder.delivered
        )
        return None

    def _dispatch(
        self, reminder: Reminder, change: V1Dispatch | V2Dispatch, seq: int
    ) -> FoldError | None:
        problem = _dispatch_problem(reminder, change)
        if problem is not None:
            return FoldError(seq, f"dispatch of {reminder.id} {problem}")
        occurrence = reminder.next_ms if isinstance(change, V1Dispatch) else change.occurrence_ms
        following = following_occurrence(reminder, occurrence)
        if following is None:
            del self._active[reminder.id]
        else:
            self._active[reminder.id] = replace(
                reminder, delivered=reminder.delivered + 1, next_ms=following, last_ms=occurrence
            )
        return None


def _dispatch_problem(reminder: Reminder, change: V1Dispatch | V2Dispatch) -> str | None:
    if isinstance(change, V1Dispatch):
        return None if reminder.legacy else "is version 1, but its record is version 2"
    if change.record_seq != reminder.seq:
        return f"follows seq {change.record_seq}, but its current record is at seq {reminder.seq}"
    if reminder.record.paused:
        return "while it is paused"
    if reminder.last_ms is not None and change.occurrence_ms <= reminder.last_ms:
        return f"repeats or precedes the occurrence already delivered ({change.occurrence_at})"
    return None
