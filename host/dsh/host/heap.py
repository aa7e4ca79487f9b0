"""The collection policy for a long-running host: keep what lives long out of the collector.

CPython's cyclic collector walks every tracked object of the oldest
generation on each full collection. A host with 10,000 live Sessions holds
millions of long-lived objects (agents, scopes, tasks, headers), so one full
collection paused the event loop for 1.1–1.3 s and landed in the reminders'
lateness tail (`bench`, issue 20). These objects live as long as their
Session, so walking them again and again finds nothing.

`HeapPolicy` moves them out of the collector's way:

- while installed (`install()`, `uninstall()`; a `Host` does both around
  its lifetime), every generation-1 collection ends with `gc.freeze()`: at
  that moment the young generations are empty, so exactly the objects that
  survived two collections — the long-lived ones — move into the permanent
  generation, which no collection walks. Freezing is a list splice, so it
  costs nothing, and a full collection then only walks what became old
  since the last one (measured: 10,000 armed Sessions hold ≈ 1.8 million
  tracked objects; a full collection of them takes ≈ 1 s, frozen ≈ 0.3 ms).
  A turn leaves no cyclic garbage behind (measured over 1,000 turns), so
  freezing survivors does not hold on to garbage of ordinary work;
- `settle()`, after a Session became live (new, resumed, forked): collect
  the young generations (cheap: only what was just made) and freeze what
  survived, so a batch of resumes never builds up an old generation;
- `released()`, after a Session closed: frozen objects that become cyclic
  garbage are not reclaimed until unfrozen, so every `reclaim_every` closes
  `reclaim()` unfreezes, collects fully once and freezes again: one full
  pause per that many closed Sessions instead of one whenever the collector
  decides. That pause walks every live object (≈ 0.1 s per 1,000 live
  Sessions), so the interval adapts to what reclaims find: a reclaim that
  found less than `LITTLE_GARBAGE` objects per closed Session doubles it (up
  to `RECLAIM_MOST`), one that found more halves it (down to the starting
  interval). Measured: closing a Session leaves no cyclic garbage (its
  objects go by reference counting, frozen or not), and neither does a
  resume (0 objects over 400; it used to leave ≈ 34, the JSONL backend's
  "already stored" refusal raised across the I/O worker's future, in a
  cycle with the awaiting frames, which a gen-1 freeze could catch before
  `settle()` collected it), so with the host's own code the interval grows;
  a plugin that leaves cycles behind keeps it short. A reclaim that is due also waits for
  a quiet moment: none while Sessions are active (`touch()`, which a Host
  calls for every event appended to any Session, or a `settle()`, under
  `QUIET_SECONDS` ago — a burst of wakes is a burst of reminders being
  delivered), unless four intervals' worth of closes have passed. (With a
  fixed 1,000 and no waiting, 10,000 Sessions woken and hibernated in a
  minute met a 0.3–1.2 s full pause every few seconds: the whole tail of the
  `wake` bench.)

The policy is process-wide state (the collector is), so a `Host` uses one
only when asked (`dsh web` does; tests and embedders choose).
"""

from __future__ import annotations

import gc
import logging
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..session.live import LiveSessions

__all__ = ["HeapPolicy"]

log = logging.getLogger(__name__)

RECLAIM_EVERY = 4_000
RECLAIM_MOST = 64_000
LITTLE_GARBAGE = 4  # cyclic objects per closed Session below which reclaims may wait longer
QUIET_SECONDS = 1.0  # no Session active for this long: a full pause may be taken
OVERDUE_FACTOR = 4  # a reclaim waits for quiet for at most this many intervals of closes


class HeapPolicy:
    """Freeze long-lived objects after Sessions go live; reclaim after many close.

    `reclaim_every` is the starting (and shortest) number of closes between reclaims."""

    def __init__(
        self,
        *,
        reclaim_every: int = RECLAIM_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if reclaim_every < 1:
            raise ValueError("reclaim_every must be at least 1")
        self.reclaim_every = reclaim_every
        self.interval = reclaim_every
        """Closes until the next reclaim: starts at `reclaim_every`, adapts (see above)."""
        self._released = 0
        self._clock = clock
        self._active_at = -math.inf
        self._installed = False
        self.settles = 0
        self.freezes = 0
        self.reclaims = 0

    def install(self) -> None:
        """Freeze survivors after every generation-1 collection from now on."""
        if not self._installed:
            gc.callbacks.append(self._collected)
            self._installed = True

    def uninstall(self) -> None:
        """Stop freezing (what is frozen stays frozen). Harmless if not installed."""
        if self._installed:
            gc.callbacks.remove(self._collected)
            self._installed = False

    @contextmanager
    def installed(self, live: LiveSessions) -> Iterator[None]:
        """Installed, and touched by every observation of `live`, while inside."""
        self.install()
        unobserve = live.observe(lambda _: self.touch())
        try:
            yield
        finally:
            unobserve()
            self.uninstall()

    def _collected(self, phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info.get("generation") == 1:
            gc.freeze()
            self.freezes += 1

    def settle(self) -> None:
        """Collect the young generations and freeze what survives (after a Session went live)."""
        gc.collect(1)
        gc.freeze()
        self.settles += 1
        self.touch()

    def touch(self) -> None:
        """Note that some Session is active now (a due reclaim waits for quiet)."""
        self._active_at = self._clock()

    def released(self) -> None:
        """Count a closed Session; reclaim once `interval` have closed and it is quiet
        (or `OVERDUE_FACTOR` intervals have closed)."""
        self._released += 1
        if self._released < self.interval:
            return
        quiet = self._clock() - self._active_at >= QUIET_SECONDS
        if quiet or self._released >= self.interval * OVERDUE_FACTOR:
            self.reclaim()

    def reclaim(self) -> None:
        """Unfreeze, collect everything once, and freeze again; then adapt the interval
        to the garbage found per Session closed since the last reclaim."""
        start = time.perf_counter()
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        closed, self._released = self._released, 0
        self.reclaims += 1
        if found < LITTLE_GARBAGE * max(closed, 1):
            self.interval = min(self.interval * 2, max(RECLAIM_MOST, self.reclaim_every))
        else:
            self.interval = max(self.interval // 2, self.reclaim_every)
        log.debug(
            "heap reclaimed: %d unreachable objects after %d closes in %.1f ms; next after %d",
            found,
            closed,
            (time.perf_counter() - start) * 1000,
            self.interval,
        )
