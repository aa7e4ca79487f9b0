"""`WakeAhead`: how much earlier than `LEAD_SECONDS` to wake the Sessions due in one second.

DESIGN §7 "Waking cold Sessions" (a storm). When many reminders fall due in
the same second (every day at 9), waking each Session only the fixed lead
before its time leaves the wake workers to resume all of them while their
owners are already dispatching. The index knows how many entries it holds
for each second, so it starts that second's Sessions early enough for the
workers to make them all live before the lead ends: `(K - 1) / rate`
seconds more (the lead itself covers one resume), where `K` is the number of
entries due in that second (`K - 1` at most `cap`) and `rate` the resumes per
second this host sustained recently, planned with `margin` (1.5) times the
measured cost. A lone Session keeps the plain lead.

Why the margin: a storm's resumes get slower as it fills the host (more live
Sessions, more to collect), so the cost measured before it starts is a little
low for its last Sessions. Planned with the cost as measured, the bench's
10,000-Session cold storm had only 7,800–8,900 of them live at the target in
two of three full runs (the rest resumed inside the lead and its p99 doubled);
half again the cost makes them live a few seconds earlier. The margin costs
time ahead, not memory: how many are live ahead is bounded by `cap` either way.

The rate is measured, never assumed: each wake worker reports how long its
resume took and how many resumes were running beside it (`observe`); one
resume then cost `seconds / running` of the host's time, and the rate is the
inverse of the mean cost over the last `samples` resumes. Until the first
resume is measured, `prior_seconds` per resume stands in (a start-up storm
is then re-planned as soon as real resumes have been measured: `replan`).

**Bounded by memory.** The extra time counts at most `cap` Sessions of one
second, so at the measured rate about `cap` of them are live before the
plain lead begins; the lead then wakes the rest as it always did. The
count is also a hard bound (`admit`): however the rate was measured and
however many crowded seconds follow each other, at most `cap` Sessions are
live *ahead of their plain lead* at once — one more is refused and waits
for its plain lead. A Session counts from its admission until its plain
lead begins (a wake that then fails still counts: the bound errs on the
side of memory). A live Session costs the RSS the bench's `storm-hot` case
reports per Session (about 40 KiB with its storm turn on the 2-core
development machine), so the default cap of 10,000 keeps what a storm makes
live ahead of the lead to about 400 MB. (At 5,000 the bench's 10,000-Session
storm woke half its Sessions only at their lead, and its p99 went from 4.0
to 14.9 s: a storm larger than the cap pays for the rest in lateness.)

Waking early only makes a Session live: its plugins' owners still deliver
at each reminder's own time, so nothing fires early.
"""

from __future__ import annotations

import heapq
from collections import deque

__all__ = ["AHEAD_CAP", "MARGIN", "PRIOR_RESUME_SECONDS", "WakeAhead"]

AHEAD_CAP = 10_000
# The host's cost of one resume before any was measured here: the issue-36
# storm (10,000 cold Sessions woken by 8 workers in about 15 s, dispatches
# included) spent 1.5 ms per resume; twice that is a cautious start.
PRIOR_RESUME_SECONDS = 0.003
SAMPLES = 64
REPLAN_CHANGE = 0.25
MARGIN = 1.5


class WakeAhead:
    """The measured resume rate, and the extra lead it gives a crowded second."""

    def __init__(
        self,
        *,
        cap: int = AHEAD_CAP,
        prior_seconds: float = PRIOR_RESUME_SECONDS,
        samples: int = SAMPLES,
        margin: float = MARGIN,
    ) -> None:
        if cap < 0:
            raise ValueError(f"the wake-ahead cap must not be negative, not {cap}")
        if not margin >= 1:
            raise ValueError(f"the wake-ahead margin must be at least 1, not {margin}")
        if not prior_seconds > 0:
            raise ValueError(f"prior_seconds must be positive, not {prior_seconds}")
        self.cap = cap
        self.margin = margin
        self._prior = prior_seconds
        self._costs: deque[float] = deque(maxlen=samples)
        self._total = 0.0
        self._planned_with = prior_seconds
        # The Sessions admitted ahead, with their plain lead; a heap of the same to
        # let them go once it begins (an entry whose lead moved is skipped then).
        self._ahead: dict[str, int] = {}
        self._leads: list[tuple[int, str]] = []

    @property
    def measured(self) -> int:
        """How many of the recent resumes the rate rests on (0: the prior stands in)."""
        return len(self._costs)

    @property
    def cost_seconds(self) -> float:
        """The host's time one resume costs: the mean of the recent ones, else the prior."""
        return self._total / len(self._costs) if self._costs else self._prior

    @property
    def rate(self) -> float:
        """Resumes per second this host sustained recently."""
        return 1 / self.cost_seconds

    def observe(self, seconds: float, running: int) -> None:
        """One resume took `seconds` with `running` resumes under way (itself included)."""
        if seconds < 0 or running < 1:
            return  # a wall clock stepped back mid-resume: no sample
        if len(self._costs) == self._costs.maxlen:
            self._total -= self._costs[0]
        cost = seconds / running
        self._costs.append(cost)
        self._total += cost

    def extra_ms(self, due: int) -> int:
        """How much earlier than the lead to wake a second holding `due` entries: the
        lead covers one resume, the others (at most `cap`) need this much more, with
        the margin."""
        return round(min(max(due - 1, 0), self.cap) * self.cost_seconds * self.margin * 1000)

    def live_ahead(self, now_ms: int) -> int:
        """How many admitted Sessions have not reached their plain lead at `now_ms`."""
        while self._leads and self._leads[0][0] <= now_ms:
            plain_ms, session_id = heapq.heappop(self._leads)
            if self._ahead.get(session_id) == plain_ms:
                del self._ahead[session_id]
        return len(self._ahead)

    def admit(self, session_id: str, plain_ms: int, now_ms: int) -> bool:
        """May `session_id` be made live now, ahead of its plain lead at `plain_ms`?

        If so it counts until then (once, however often it is asked: a wake
        tried again after a failure is the same Session); at `cap` the answer
        is no, and it waits for that lead."""
        if self.live_ahead(now_ms) >= self.cap and session_id not in self._ahead:
            return False
        if self._ahead.get(session_id) != plain_ms:
            self._ahead[session_id] = plain_ms
            heapq.heappush(self._leads, (plain_ms, session_id))
        return True

    def replan(self) -> bool:
        """True (once) when the rate moved by more than a quarter since the last plan:
        the caller re-arms what it armed with the old one."""
        cost = self.cost_seconds
        if abs(cost - self._planned_with) <= REPLAN_CHANGE * self._planned_with:
            return False
        self._planned_with = cost
        return True
