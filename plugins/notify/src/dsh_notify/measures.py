"""What dsh-notify tells `GET /metrics` (DESIGN §14.3), through `PluginContext.metrics`.

- `dsh_notify_deliveries_total{channel,outcome}`: sends, by channel
  (`webpush`, `apprise`) and what became of them: `accepted`, `retried`
  (to be tried again), `gone` (the target no longer exists), `failed`
  (rejected, or out of attempts);
- `dsh_notify_pruned_total`: finished deliveries pruned from the outbox.

Registered in the plugin's scope: unloading the plugin takes them off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from dsh import Metrics, Scope

__all__ = ["DeliveryMeasures", "Outcome"]

Outcome = Literal["accepted", "retried", "gone", "failed"]


class DeliveryMeasures:
    """The plugin's metrics (see the module docstring)."""

    def __init__(self, metrics: Metrics, scope: Scope, pruned: Callable[[], int]) -> None:
        self._deliveries = metrics.counter(
            "dsh_notify_deliveries_total",
            "Notification sends, by channel and outcome (accepted, retried, gone, failed).",
            ("channel", "outcome"),
            scope=scope,
        )
        metrics.counted(
            "dsh_notify_pruned_total",
            "Finished notification deliveries pruned from the outbox.",
            pruned,
            scope=scope,
        )

    def sent(self, channel: str, outcome: Outcome) -> None:
        self._deliveries.labels(channel=channel, outcome=outcome).inc()
