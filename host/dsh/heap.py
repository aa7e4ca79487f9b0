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
  decides.

The policy is process-wide state (the collector is), so a `Host` uses one
only when asked (`dsh web` does; tests and embedders choose).
"""

from __future__ import annotations

import gc
import logging
import time

__all__ = ["HeapPolicy"]

log = logging.getLogger(__name__)

RECLAIM_EVERY = 1_000


class HeapPolicy:
    """Freeze long-lived objects after Sessions go live; reclaim after many close."""

    def __init__(self, *, reclaim_every: int = RECLAIM_EVERY) -> None:
        if reclaim_every < 1:
            raise ValueError("reclaim_every must be at least 1")
        self.reclaim_every = reclaim_every
        self._released = 0
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

    def _collected(self, phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info.get("generation") == 1:
            gc.freeze()
            self.freezes += 1

    def settle(self) -> None:
        """Collect the young generations and freeze what survives (after a Session went live)."""
        gc.collect(1)
        gc.freeze()
        self.settles += 1

    def released(self) -> None:
        """Count a closed Session; reclaim once `reclaim_every` have closed."""
        self._released += 1
        if self._released >= self.reclaim_every:
            self.reclaim()

    def reclaim(self) -> None:
        """Unfreeze, collect everything once, and freeze again."""
        start = time.perf_counter()
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
        self._released = 0
        self.reclaims += 1
        log.debug(
            "heap reclaimed: %d unreachable objects in %.1f ms",
            found,
            (time.perf_counter() - start) * 1000,
        )
