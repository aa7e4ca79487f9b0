"""What a reminder does at a time T: a pure function of the fold's state and T.

The fold says which occurrence a reminder owes next (`Reminder.next_ms`);
`plan(reminder, now_ms, grace_ms=...)` says what that means at `now_ms`:

- **paused**: nothing is due; `next_ms` is what resuming would give (a
  one-shot keeps its target, a recurring rule its next occurrence after now);
- **scheduled**: the owed occurrence is still ahead (`next_ms`);
- **due**: it has come. A one-shot is delivered once, however late
  (`overdue`). For a recurring rule, the occurrences due are the owed one and
  every later one up to now (and `until`); `misfire` decides:
  - `latest` delivers one occurrence, the most recent, whose `missed` counts
    the earlier ones it stands for (exactly below `COUNT_CAP`; `COUNT_CAP`
    means "that many or more");
  - `skip` delivers the most recent one only if it is at most `grace_ms`
    old (`missed` 0); otherwise nothing, and the reminder waits for its next
    occurrence after now — or, with none left before `until`, is
    **expired**: it will never deliver again, so every reader treats it as
    finished although no event finished it.

Nothing here is written to the log: a skipped occurrence leaves no trace, and
the next evaluation skips it again. The owner acts on `due`; views show
`state` and `next_ms`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .fold import Reminder
from .series import COUNT_CAP

__all__ = ["Due", "Plan", "plan", "with_missed"]

State = Literal["scheduled", "overdue", "paused"]


@dataclass(frozen=True, slots=True)
class Due:
    """Deliver `occurrence_ms` now, standing for `missed` earlier occurrences too."""

    occurrence_ms: int
    missed: int


@dataclass(frozen=True, slots=True)
class Plan:
    state: State
    next_ms: int | None
    """The occurrence the view shows: the one due, or the next one ahead."""
    due: Due | None = None
    expired: bool = False

    @property
    def wake_ms(self) -> int | None:
        """When the owner must look again on its own (None: only when something changes)."""
        return self.next_ms if self.state == "scheduled" else None


def plan(reminder: Reminder, now_ms: int, *, grace_ms: int, count_missed: bool = True) -> Plan:
    """What `reminder` does at `now_ms` (module docstring).

    `count_missed=False` leaves `Due.missed` at 0 for readers that only show
    the state and for the owner, which counts with `with_missed` in a worker
    thread (counting is the costly part: up to milliseconds for a dense rule
    missed for months, more for a clock years ahead).
    """
    record = reminder.record
    owed = reminder.next_ms
    if record.paused:
        if record.recurring and owed <= now_ms:
            return Plan("paused", reminder.series.next_after(now_ms))
        return Plan("paused", owed)
    if owed > now_ms:
        return Plan("scheduled", owed)
    if not record.recurring:
        return Plan("overdue", owed, Due(owed, 0))
    latest = reminder.series.last_at_or_before(now_ms)
    if latest is None or latest < owed:
        latest = owed
    if record.misfire == "skip":
        if now_ms - latest <= grace_ms:
            return Plan("overdue", latest, Due(latest, 0))
        ahead = reminder.series.next_after(now_ms)
        return Plan("scheduled", ahead, expired=ahead is None)
    missed = _missed(reminder, latest) if count_missed else 0
    return Plan("overdue", latest, Due(latest, missed))


def with_missed(reminder: Reminder, due: Due) -> Due:
    """`due` (from `plan(..., count_missed=False)` at some time) with its `missed` counted.

    What `plan` with `count_missed=True` at that time gives; a one-shot and a
    `skip` reminder miss nothing.
    """
    if not reminder.record.recurring or reminder.record.misfire == "skip":
        return due
    return Due(due.occurrence_ms, _missed(reminder, due.occurrence_ms))


def _missed(reminder: Reminder, latest_ms: int) -> int:
    """The occurrences from the owed one up to (not including) `latest_ms`, at most `COUNT_CAP`."""
    if latest_ms == reminder.next_ms:
        return 0
    return min(1 + reminder.series.count_between(reminder.next_ms, latest_ms), COUNT_CAP)
