"""Rate-limited logging: what a hostile peer can trigger at will is written at most once
per interval, with a count.

Before these, every descriptor-exhausted `accept()` wrote an asyncio
traceback (about 5 MB/s of log at 80% of a core with 1,100 held
connections), and every malformed request or refused WebSocket one line:
anyone able to connect could fill the disk.

- `LogSummary` counts named events (refused, evicted, timed out…). The first
  event after a quiet interval is written at once; the rest are only
  counted, and when the interval ends one line gives the counts. No count
  is lost: `close()` writes what is still pending.
- `QuietRepeats` is a `logging.Filter` for lines whose message template is
  in a given set: one line per template per interval passes, the next one
  that passes says how many were dropped before it.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Collection
from typing import Protocol

__all__ = ["INTERVAL", "LogSummary", "QuietRepeats"]

INTERVAL = 10.0


class Cancellable(Protocol):
    def cancel(self) -> None: ...


Schedule = Callable[[float, Callable[[], None]], Cancellable]


class LogSummary:
    """At most one log line per `interval` about the events `note()` counted.

    `schedule(delay, callback)` arms a timer (the event loop's `call_later`);
    `describe()` adds the current state to every line (e.g. "512 held").
    Lines are warnings, except those that count only `quiet` events (info).
    """

    def __init__(
        self,
        logger: logging.Logger,
        what: str,
        schedule: Schedule,
        *,
        interval: float = INTERVAL,
        describe: Callable[[], str] | None = None,
        quiet: Collection[str] = (),
    ) -> None:
        self._logger = logger
        self._quiet = frozenset(quiet)
        self._what = what
        self._schedule = schedule
        self._interval = interval
        self._describe = describe
        self._pending: Counter[str] = Counter()
        self._timer: Cancellable | None = None
        self.lines = 0

    def note(self, event: str) -> None:
        """Count one `event`; write a line now if the last interval was quiet."""
        self._pending[event] += 1
        if self._timer is None:
            self._write(first=True)
            self._timer = self._schedule(self._interval, self._tick)

    def close(self) -> None:
        """Stop the timer and write what is still pending."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending:
            self._write(first=False)

    def _tick(self) -> None:
        self._timer = None
        if self._pending:
            self._write(first=False)
            self._timer = self._schedule(self._interval, self._tick)

    def _write(self, *, first: bool) -> None:
        counts = ", ".join(f"{count} {event}" for event, count in sorted(self._pending.items()))
        level = logging.INFO if self._quiet.issuperset(self._pending) else logging.WARNING
        self._pending.clear()
        state = f" ({self._describe()})" if self._describe is not None else ""
        if first:
            tail = f"; repeats are summarized every {self._interval:g} s"
        else:
            tail = f" in the last {self._interval:g} s"
        self._logger.log(level, "%s: %s%s%s", self._what, counts, tail, state)
        self.lines += 1


class QuietRepeats(logging.Filter):
    """Let one record per message template in `templates` through per `interval`."""

    def __init__(
        self,
        templates: Collection[str],
        *,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self._templates = frozenset(templates)
        self._interval = interval
        self._clock = clock
        # template -> [when the last line passed, how many were dropped since]
        self._seen: dict[str, list[float]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        template = record.msg
        if not isinstance(template, str) or template not in self._templates:
            return True
        now = self._clock()
        seen = self._seen.get(template)
        if seen is not None and now - seen[0] < self._interval:
            seen[1] += 1
            return False
        dropped = int(seen[1]) if seen is not None else 0
        self._seen[template] = [now, 0]
        if dropped:
            record.msg = f"{template} [{dropped} more like this were not logged]"
        return True

    def dropped(self) -> dict[str, int]:
        """How many records of each template were dropped since the last that passed."""
        return {template: int(seen[1]) for template, seen in self._seen.items() if seen[1]}
