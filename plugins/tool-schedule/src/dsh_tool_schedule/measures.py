"""What the schedule plugin tells `GET /metrics` (DESIGN §14.3), through `PluginContext.metrics`.

- `dsh_reminders_dispatched_total`: dispatches whose flush storage
  acknowledged (a coalesced delivery counts each reminder it delivers);
- `dsh_reminder_dispatch_lateness_seconds`: for each, how long after its
  occurrence the dispatch was durable — buckets from 1 ms to 60 s, then the
  minutes a closed or busy Session can add;
- `dsh_reminders_overdue`: active reminders of this host's live Sessions
  whose time has passed and that are not dispatched yet, read when scraped.

Registered in the plugin's scope: unloading the plugin takes them off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dsh import Metrics, Scope

__all__ = ["LATENESS_BUCKETS", "DeliveryMeasures"]

#: Seconds late: an armed Session's dispatch takes a few ms; a woken one up to a few s;
#: a busy agent or a closed Session under the note's overlay, minutes.
LATENESS_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                    10.0, 30.0, 60.0, 300.0, 3600.0)  # fmt: skip


class DeliveryMeasures:
    """The plugin's metrics (module docstring); `overdue()` counts at each scrape."""

    def __init__(self, metrics: Metrics, scope: Scope, overdue: Callable[[], int]) -> None:
        self._dispatched = metrics.counter(
            "dsh_reminders_dispatched_total",
            "Reminder dispatches storage acknowledged (one per reminder delivered).",
            scope=scope,
        )
        self._lateness = metrics.histogram(
            "dsh_reminder_dispatch_lateness_seconds",
            "Seconds from a reminder's occurrence to its durable dispatch.",
            LATENESS_BUCKETS,
            scope=scope,
        )
        metrics.gauge(
            "dsh_reminders_overdue",
            "Active reminders of live Sessions whose time has passed, not dispatched yet.",
            read=overdue,
            scope=scope,
        )

    def dispatched(self, occurrences_ms: Iterable[int], durable_ms: int) -> None:
        """Dispatches of these occurrences became durable at `durable_ms` (wall clock)."""
        for occurrence_ms in occurrences_ms:
            self._dispatched.inc()
            self._lateness.observe(max(durable_ms - occurrence_ms, 0) / 1000)
