"""What a Host measures (DESIGN §14.3), registered into its `Metrics` for `GET /metrics`.

- `dsh_sessions_live`: the live Sessions, counted where they are kept;
- `dsh_storage_append_seconds`: each `Backend.append` of the write path;
- `dsh_storage_unconfirmed_events`: events storage has not confirmed yet
  (what `/api/health` calls degraded);
- `dsh_model_requests_total{outcome}`: every call of the model adapter an
  agent makes — `ok`, `error` (a `ModelError`: unreachable, refused, …),
  `failed` (the adapter raised something else) or `cancelled`;
- `dsh_wake_woken_total`: Sessions the wake index made live, and
  `dsh_wake_overdue_sessions`: closed Sessions whose time has passed and
  that are not live yet (both 0 when the Host wakes none).

Plugins register their own (the schedule plugin: its dispatches and their
lateness). Every label takes a handful of values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from ..base.metrics import Counter, Histogram, Metrics
from ..models.base import DeltaSink, ModelAdapter, ModelReply, ModelRequest
from ..models.errors import ModelError

if TYPE_CHECKING:
    from ..base.scope import Scope
    from ..session.live import LiveSessions
    from ..wake.lifecycle import SessionLifecycle
    from .catalogue.catalogue import Catalogue

__all__ = ["APPEND_BUCKETS", "HostMetrics", "MeteredModel"]

#: Seconds, from a page-cache write (≈ 0.1 ms) to a disk or a database in trouble.
APPEND_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                  0.25, 0.5, 1.0, 2.5, 5.0, 10.0)  # fmt: skip


class HostMetrics:
    """The Host's own metrics, registered in `metrics` for as long as `scope` is open."""

    def __init__(
        self,
        metrics: Metrics,
        scope: Scope,
        live: LiveSessions,
        catalogue: Catalogue,
        lifecycle: SessionLifecycle,
    ) -> None:
        self.metrics = metrics
        metrics.gauge(
            "dsh_sessions_live",
            "Sessions live on this host (their agent running).",
            read=lambda: sum(1 for _ in live.live()),
            scope=scope,
        )
        metrics.gauge(
            "dsh_storage_unconfirmed_events",
            "Events of live Sessions whose writes are failing, not yet confirmed stored.",
            read=lambda: catalogue.health().unconfirmed_events,
            scope=scope,
        )
        self.append_seconds: Histogram = metrics.histogram(
            "dsh_storage_append_seconds",
            "Seconds each append of a batch of events to storage took (durable when done).",
            APPEND_BUCKETS,
            scope=scope,
        )
        self.model_requests: Counter = metrics.counter(
            "dsh_model_requests_total",
            "Calls of the model adapter by agents, by outcome (ok, error, failed, cancelled).",
            ("outcome",),
            scope=scope,
        )
        metrics.gauge(
            "dsh_wake_overdue_sessions",
            "Closed Sessions whose wake time has passed and that are not live yet.",
            read=lambda: 0 if lifecycle.index is None else lifecycle.index.overdue(),
            scope=scope,
        )
        metrics.counted(
            "dsh_wake_woken_total",
            "Closed Sessions the wake index made live at their time.",
            lambda: 0 if lifecycle.index is None else lifecycle.index.woken,
            scope=scope,
        )

    def metered(self, adapter: ModelAdapter) -> MeteredModel:
        """`adapter` as agents call it, each call counted by outcome."""
        return MeteredModel(adapter, self.model_requests)


class MeteredModel:
    """A model adapter whose every `complete` is counted in `dsh_model_requests_total`.

    Only agents see it: the Host's `model` stays the adapter itself.
    """

    __slots__ = ("_requests", "adapter", "name")

    def __init__(self, adapter: ModelAdapter, requests: Counter) -> None:
        self.adapter = adapter
        self.name = adapter.name
        self._requests = requests

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        outcome = "failed"
        try:
            reply = await self.adapter.complete(request, on_delta)
            outcome = "ok"
            return reply
        except ModelError:
            outcome = "error"
            raise
        except anyio.get_cancelled_exc_class():
            outcome = "cancelled"
            raise
        finally:
            self._requests.labels(outcome).inc()

    def __repr__(self) -> str:
        return repr(self.adapter)
