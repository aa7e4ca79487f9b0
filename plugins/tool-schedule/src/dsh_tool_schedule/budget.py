"""Delivery budgets: how many model turns reminders may start, per Session and per host.

Every delivered reminder starts a paid model turn. A model that answers each
reminder by creating more (`max_per_turn` resets every turn) reached 100
active `* * * * *` reminders in five turns and ~89 turns a minute — about
128,000 model calls a day for one Session. Two budgets stop that:

**Per Session** (`SessionBudget`): at most `max_deliveries_per_hour` turns
started by reminders in any rolling hour and `max_deliveries_per_day` in any
rolling day (`ScheduleConfig`). A turn is one follow-up: a coalesced delivery
(several reminders due in one second, one message) is one turn, and so is a
follow-up queued again after a crash. The budget is read from the log when
the owner starts (the times of the stored schedule follow-ups of the last
day, a backward scan that stops at the first older one), so a restart does
not refill it, and kept in memory after that. `blocked_until(now)` is None
while a turn may start, else the first time one may: a reminder due before
then is *deferred* — it stays active and due, nothing fires early, and it is
delivered when the budget allows (see the owner and DESIGN §8 for what that
means for `missed` and one-shots).

**Per host** (`HostPacer`): at most `host_deliveries_per_minute` turns
started by reminders in any rolling minute across every Session of the host.
Beyond it deliveries wait, first come first served: a refused owner is queued
and woken (its `recompute`) when a slot frees and it is at the head, so a
Session with many due reminders cannot take the slots of one that asked
before it. A slot granted to a delivery that then finds nothing to deliver is
given back.

Both are pure bookkeeping on times the caller passes: no clock is read here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from dsh import USER_MESSAGE

from .followups import answered_seqs

if TYPE_CHECKING:
    from dsh import SessionLog

    from .alarm import Alarm

__all__ = ["DAY_MS", "HOUR_MS", "MINUTE_MS", "HostPacer", "SessionBudget"]

MINUTE_MS: Final = 60_000
HOUR_MS: Final = 3_600_000
DAY_MS: Final = 86_400_000
_TYPES = frozenset({USER_MESSAGE})


class SessionBudget:
    """Turns started by reminders in one Session, per rolling hour and day."""

    __slots__ = ("_per_day", "_per_hour", "_times")

    def __init__(self, per_hour: int, per_day: int, times: list[int] | None = None) -> None:
        self._per_hour = per_hour
        self._per_day = per_day
        # Oldest first; only the last `per_day` matter (older ones never block again).
        self._times: deque[int] = deque(sorted(times or ())[-per_day:], maxlen=per_day)

    @classmethod
    def of_log(cls, log: SessionLog, per_hour: int, per_day: int, now_ms: int) -> SessionBudget:
        """The budget the stored follow-ups of `log` in the day before `now_ms` have used."""
        times: list[int] = []
        for event in log.scan(log.fold_start, types=_TYPES, reverse=True):
            if event.time <= now_ms - DAY_MS or len(times) >= per_day:
                break
            if answered_seqs(event.data):
                times.append(event.time)
        return cls(per_hour, per_day, times)

    @property
    def used(self) -> int:
        """How many turn times the budget holds (at most `per_day`)."""
        return len(self._times)

    def record(self, at_ms: int) -> None:
        """A turn started by reminders was queued at `at_ms`."""
        self._times.append(at_ms)

    def blocked_until(self, now_ms: int) -> int | None:
        """None while a turn may start at `now_ms`; else the first time one may."""
        until = None
        for limit, window in ((self._per_hour, HOUR_MS), (self._per_day, DAY_MS)):
            free = self._free_at(limit, window)
            if free is not None and free > now_ms:
                until = free if until is None else max(until, free)
        return until

    def limit_hit(self, now_ms: int) -> tuple[str, int]:
        """Which limit blocks at `now_ms` (`"hour"` or `"day"`, the day first) and its size."""
        free = self._free_at(self._per_day, DAY_MS)
        if free is not None and free > now_ms:
            return "day", self._per_day
        return "hour", self._per_hour

    def _free_at(self, limit: int, window: int) -> int | None:
        """When the window has room for one more turn: the `limit`-th latest time + window."""
        if len(self._times) < limit:
            return None
        return self._times[-limit] + window


Wake = Callable[[], None]


class HostPacer:
    """Turns started by reminders across one host, per rolling minute (module docstring)."""

    __slots__ = ("_alarm", "_per_minute", "_times", "_waiting")

    def __init__(self, per_minute: int, alarm: Alarm) -> None:
        self._per_minute = per_minute
        self._alarm = alarm
        self._times: deque[int] = deque(maxlen=per_minute)
        # Owners refused a slot, first come first served: key → how to wake it.
        self._waiting: dict[object, Wake] = {}

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def admit(self, key: object, now_ms: int, wake: Wake) -> bool:
        """Take a slot for `key` at `now_ms` (True), or queue it to be woken by `wake`."""
        head = next(iter(self._waiting), key)
        if head is key and self._free_at() <= now_ms:
            self._waiting.pop(key, None)
            self._times.append(now_ms)
            self._wake_head(now_ms)
            return True
        self._waiting.setdefault(key, wake)
        self._arm()
        return False

    def give_back(self, now_ms: int) -> None:
        """The slot last granted was not used (nothing was delivered)."""
        if self._times:
            self._times.pop()
        self._wake_head(now_ms)

    def forget(self, key: object) -> None:
        """`key` stopped waiting (its owner stopped); the next in line may be woken."""
        if self._waiting.pop(key, None) is not None:
            self._arm()

    def _free_at(self) -> int:
        if len(self._times) < self._per_minute:
            return 0
        return self._times[0] + MINUTE_MS

    def _arm(self) -> None:
        if self._waiting:
            self._alarm.set(self, self._free_at(), self._ring)
        else:
            self._alarm.clear(self)

    def _ring(self) -> None:
        """A slot may be free: wake the head (it takes the slot, or is queued again)."""
        head = next(iter(self._waiting), None)
        if head is not None:
            self._waiting[head]()

    def _wake_head(self, now_ms: int) -> None:
        if self._waiting and self._free_at() <= now_ms:
            self._ring()
        else:
            self._arm()
