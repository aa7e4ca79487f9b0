"""`AlertFeed`: what a plugin may do with the alerts the Host finds (`PluginContext.alerts`).

- `subscribe(sink, scope=...)`: `await sink(alerts)` is called with every
  batch of newly found alerts of a Session (`dsh.Alert`, with the `snooze`
  its plugin named) **before** they are recorded as checked. So a sink that
  returns once it has durably taken them loses none across a crash: an
  alert whose record a crash cut off is found, and handed over, again when
  its Session next goes live. Hence a sink must be idempotent by
  (`session_id`, `seq`), and quick — record, never send: the Host's one
  attention worker waits for it. A sink that raises `dsh.StorageError` has
  the batch handed over again later (growing delays; nothing is recorded
  meanwhile); any other exception is logged, naming the sink, and the batch
  goes on to be recorded. The subscription ends when `scope` closes.
- `read(session_id, through_seq)`: mark that Session's alerts up to
  `through_seq` read, as the page's Done does; the unread count after.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from ..base.scope import Scope
from .alert import Alert

__all__ = ["AlertFeed", "AlertSink"]

AlertSink = Callable[[Sequence[Alert]], Awaitable[None]]


class AlertFeed(Protocol):
    """The Host's alerts, as a plugin sees them (see the module docstring)."""

    def subscribe(self, sink: AlertSink, *, scope: Scope) -> None: ...

    async def read(self, session_id: str, through_seq: int) -> int: ...
