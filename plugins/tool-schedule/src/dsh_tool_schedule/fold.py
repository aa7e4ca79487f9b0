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
`copy()` is an independent fold at the same position (what a cache of folds
hands out, so two readers never advance one fold at once).

Follow-ups: the fold also knows which of its v2 dispatches have no stored
follow-up message (`unanswered()`, `followups.Followups`); for that it reads
only the `message/user` events from the earliest such dispatch on, each once.

Cost: the fold reads each payload with a plain check (`protocol.plain`:
type checks, the id pattern, timestamp arithmetic; the models only when that
check is not sure, so their messages are the ones a rejection reports) and
keeps each active reminder as that plain record. The `Reminder` (with its
pydantic `Record`) is built when `reminders()` or `get()` first asks for it,
once per state; a rule's series once per record, when first needed, from
the fold's `CronCache` (each distinct cron text is parsed once). After a
dispatch of a cron record, the occurrence it owes is looked up only when
someone asks (`series.Following`): a reader, or a later update or delete
of it. A later dispatch needs only to know that one was owed, and a
dispatch of one of the rule's occurrences proves it by matching one wall
time against the fields instead of walking through them (about 40 µs a
step in cronsim, which was most of a cron log's fold). An `every` rule's
next occurrence is arithmetic, so it is known at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .cron import CronExpression
from .cron_cache import CronCache
from .followups import Followups, Unanswered
from .ids import ReminderId, format_reminder_id, parse_reminder_id
from .protocol import (
    EVENT_TYPE,
    AfterRule,
    Change,
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
from .protocol.plain import PlainChange, PlainDelete, PlainDispatch, PlainRecord, plain_change
from .series import Bounded, Following, series_for, series_of

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


class _Record:
    """One record the fold holds: its plain form, and what is built from it on demand."""

    __slots__ = ("_cron", "_model", "_series", "plain")

    def __init__(self, plain: PlainRecord, cron: CronExpression | None = None) -> None:
        self.plain = plain
        self._cron = cron
        self._model: Record | None = None
        self._series: Bounded | None = None

    def model(self) -> Record:
        if self._model is None:
            self._model = Record.model_validate(self.plain.data)
        return self._model

    def compact(self) -> None:
        self._model = None
        self._series = None
        self._cron = None

    def series(self) -> Bounded:
        if self._series is None:
            plain = self.plain
            rule, zone = plain.data["rule"], plain.data["timeZone"]
            self._series = series_for(rule, plain.first_ms, zone, plain.until_ms, self._cron)
        return self._series


class _State:
    """A reminder inside the fold (what `Reminder` is built from, once).

    `owed` is the occurrence it owes: the record's `nextAt`, or after a
    dispatch the rule's next occurrence — an `every` rule's at once, a cron
    rule's looked up when first asked (`Following`); while that is not known
    the state may be one whose rule had no occurrence left, which is
    finished (`finished`).
    """

    __slots__ = (
        "_shown",
        "created_seq",
        "delivered",
        "last_ms",
        "legacy",
        "owed",
        "record",
        "seq",
    )

    def __init__(
        self,
        record: _Record,
        seq: int,
        created_seq: int,
        delivered: int,
        owed: int | Following,
        last_ms: int | None,
        legacy: bool,
    ) -> None:
        self.record = record
        self.seq = seq
        self.created_seq = created_seq
        self.delivered = delivered
        self.owed = owed
        self.last_ms = last_ms
        self.legacy = legacy
        self._shown: Reminder | None = None

    def next_ms(self) -> int | None:
        """The occurrence owed (None: the rule had none left, so the reminder is finished)."""
        owed = self.owed
        return owed if isinstance(owed, int) else owed.ms()

    def finished(self, change: PlainChange) -> bool:
        """Whether its last dispatch delivered its rule's last occurrence, found out only when
        `change` names it (a dispatch's own occurrence may answer: `Following.exists`)."""
        owed = self.owed
        if isinstance(owed, int):
            return False
        return not owed.exists(change.occurrence_ms if isinstance(change, PlainDispatch) else None)

    def reminder(self) -> Reminder | None:
        """The `Reminder`, or None when it is finished."""
        if self._shown is None:
            next_ms = self.next_ms()
            if next_ms is None:
                return None
            record = self.record
            self._shown = Reminder(
                record.model(),
                self.seq,
                self.created_seq,
                self.delivered,
                next_ms,
                self.last_ms,
                self.legacy,
                record.series(),
            )
        return self._shown

    def compact(self) -> None:
        self._shown = None
        self.record.compact()


class ScheduleFold:
    """Fold state over one Session's range; feed it the Session's log as it grows."""

    __slots__ = (
        "_active",
        "_crons",
        "_error",
        "_followups",
        "_highest",
        "_position",
        "_seen",
        "start",
    )

    def __init__(self, start: int = 0) -> None:
        self.start = start
        self._position = start
        self._active: dict[ReminderId, _State] = {}
        self._seen: dict[ReminderId, int] = {}
        self._highest = 0
        self._error: FoldError | None = None
        self._crons = CronCache()
        self._followups = Followups(start)

    @classmethod
    def of(cls, log: SessionLog, stop: int | None = None) -> ScheduleFold:
        """A fresh fold of `log`'s fold range (up to `stop`, exclusive, when given)."""
        return cls(log.fold_start).advance(log, stop)

    def copy(self) -> ScheduleFold:
        """An independent fold in the same state (advancing one never changes the other)."""
        twin = ScheduleFold(self.start)
        twin._position = self._position
        twin._active = dict(self._active)
        twin._seen = dict(self._seen)
        twin._highest = self._highest
        twin._error = self._error
        twin._crons = self._crons.copy()
        twin._followups = self._followups.copy()
        return twin

    @property
    def position(self) -> int:
        """The seq of the first event not read yet."""
        return self._position

    @property
    def created(self) -> int:
        """How many ids the fold has seen created (what its memory grows with)."""
        return len(self._seen)

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
        self._followups.advance(log, end)
        self._position = max(self._position, end)
        return self

    def reminders(self) -> list[Reminder]:
        """The active reminders in creation order."""
        shown = (state.reminder() for state in self._active.values())
        return [reminder for reminder in shown if reminder is not None]

    def compact(self) -> None:
        """Drop what `reminders()` and `get()` built; they build it again when next asked.

        The owner calls it before it rests, so an armed Session that waits for
        its alarm keeps its reminders only in their plain form (≈ 2 KB less each),
        and no parsed cron expression.
        """
        for state in self._active.values():
            state.compact()
        self._crons.clear()

    def unanswered(self) -> list[Unanswered]:
        """The v2 dispatches whose follow-up message is not in the log, oldest first."""
        return self._followups.unanswered()

    def get(self, reminder_id: str) -> Reminder | None:
        state = self._active.get(ReminderId(reminder_id))
        return None if state is None else state.reminder()

    def next_id(self) -> ReminderId:
        """The id the next `create` uses: one past the highest number seen in the fold.

        Raises `ValueError` once 2^53-1 is taken.
        """
        return format_reminder_id(self._highest + 1)

    # -- transitions --------------------------------------------------------

    def _apply(self, seq: int, data: object) -> FoldError | None:
        change = plain_change(data, self._crons)
        if change is None:
            try:
                change = _plain_of(decode_change(data))  # type: ignore[arg-type]
            except ProtocolError as error:
                return FoldError(seq, f"invalid schedule/change: {error.reason}")
        if isinstance(change, PlainRecord) and change.change == "create":
            return self._create(change, seq)
        target = change.id
        state = self._active.get(target)
        if state is not None and state.finished(change):
            del self._active[target]
            state = None
        if state is None:
            known = "already finished" if target in self._seen else "never created in this fold"
            return FoldError(seq, f"{change.change} of {target}, which is {known}")
        if isinstance(change, PlainDelete):
            del self._active[target]
            return None
        if isinstance(change, PlainRecord):
            return self._update(state, change, seq)
        return self._dispatch(state, change, seq)

    def _create(self, record: PlainRecord, seq: int) -> FoldError | None:
        first = self._seen.get(record.id)
        if first is not None:
            return FoldError(seq, f"create reuses id {record.id} (first created at seq {first})")
        self._seen[record.id] = seq
        self._highest = max(self._highest, record.number)
        self._active[record.id] = _State(
            self._record(record), seq, seq, 0, record.next_ms, None, record.v1
        )
        return None

    def _update(self, state: _State, record: PlainRecord, seq: int) -> FoldError | None:
        expected = state.record.plain.revision + 1
        if record.revision != expected:
            return FoldError(
                seq,
                f"update of {record.id} has revision {record.revision}; "
                f"the next revision is {expected}",
            )
        if record.count is not None and record.count <= state.delivered:
            return FoldError(
                seq,
                f"update of {record.id} sets count {record.count}, but "
                f"{state.delivered} occurrences were already delivered",
            )
        self._active[record.id] = _State(
            self._record(record),
            seq,
            state.created_seq,
            state.delivered,
            record.next_ms,
            None,
            False,
        )
        return None

    def _record(self, plain: PlainRecord) -> _Record:
        """`plain` as the fold holds it, a cron rule's expression parsed (once per text)."""
        cron = self._crons.parse(plain.data["rule"]["cron"]) if plain.kind == "cron" else None
        return _Record(plain, cron)

    def _dispatch(self, state: _State, change: PlainDispatch, seq: int) -> FoldError | None:
        problem = _dispatch_problem(state, change)
        if problem is not None:
            return FoldError(seq, f"dispatch of {change.id} {problem}")
        occurrence = change.occurrence_ms
        if occurrence is None:  # v1: of a v1 one-shot (`_dispatch_problem`), at its own nextAt
            occurrence = state.record.plain.next_ms
        following = _following(state, occurrence)
        if change.missed is not None:
            self._followups.dispatched(
                Unanswered(seq, state.record.plain, occurrence, change.missed, following)
            )
        if following is None:
            del self._active[change.id]
        else:
            self._active[change.id] = _State(
                state.record,
                state.seq,
                state.created_seq,
                state.delivered + 1,
                following,
                occurrence,
                state.legacy,
            )
        return None


def _following(state: _State, occurrence_ms: int) -> int | Following | None:
    """`following_occurrence` of the reminder `state` stands for: at once when that is
    arithmetic (None: there is none), a cron rule's looked up when first asked (a walk)."""
    plain = state.record.plain
    if not plain.recurring:
        return None
    if plain.count is not None and state.delivered + 1 >= plain.count:
        return None
    series = state.record.series()
    if plain.kind == "every":
        return series.next_after(occurrence_ms)
    return Following(series, occurrence_ms)


def _dispatch_problem(state: _State, change: PlainDispatch) -> str | None:
    if change.occurrence_ms is None:
        return None if state.legacy else "is version 1, but its record is version 2"
    if change.record_seq != state.seq:
        return f"follows seq {change.record_seq}, but its current record is at seq {state.seq}"
    if state.record.plain.paused:
        return "while it is paused"
    if state.last_ms is not None and change.occurrence_ms <= state.last_ms:
        return f"repeats or precedes the occurrence already delivered ({change.occurrence_at})"
    return None


def _plain_of(change: Change) -> PlainChange:
    """The plain form of a change the models decoded (the plain check was not sure)."""
    if isinstance(change, V1Create):
        record = record_of_v1(change.record)
        return _plain_record("create", record, v1=True)
    if isinstance(change, V2Create | V2Update):
        return _plain_record(change.change, change.record)
    if isinstance(change, V2Dispatch):
        return PlainDispatch(
            change.id, change.occurrence_at, change.occurrence_ms, change.record_seq, change.missed
        )
    if isinstance(change, V1Delete | V2Delete):
        return PlainDelete(change.id)
    assert isinstance(change, V1Dispatch)
    return PlainDispatch(change.id)


def _plain_record(change: str, record: Record, *, v1: bool = False) -> PlainRecord:
    return PlainRecord(
        change,
        record.id,
        parse_reminder_id(record.id)[1],
        record.to_data(),
        record.rule.kind,
        record.next_ms,
        record.first_ms,
        record.until_ms,
        record.count,
        record.paused,
        record.revision,
        v1=v1,
    )
