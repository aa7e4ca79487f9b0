"""`Recorder`: the alert sink — one outbox delivery per alert and channel target, nothing sent.

The Host hands every batch of new alerts to the sink before it records them
(`dsh.AlertFeed`), on its one attention worker. Rules:

1. For each alert and each target of each channel (`Channel.targets()` at
   that moment) one `Delivery`, keyed `(session, seq, channel, target)`: a
   batch handed over again after a crash adds nothing new.
2. It returns once the outbox has them durably, then wakes the sender; it
   sends nothing itself, so a slow channel never holds the worker.
3. Until the plugin's start-up opened the outbox (and Web Push), it waits
   at most `ready_timeout` seconds, then raises `dsh.StorageError`, as it
   does when the outbox cannot keep them: the Host hands the batch over
   again later, so nothing is lost while storage is down.
4. The message links to the Session: `Message.url` is `/?session=<id>`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import quote

import anyio

from dsh import Alert, StorageError

from .channel import Message
from .outbox import Delivery

if TYPE_CHECKING:
    from dsh import Clock

    from .channel import Channel
    from .outbox import OutboxBackend

__all__ = ["READY_TIMEOUT", "Recorder", "message_of"]

READY_TIMEOUT = 10.0


def message_of(alert: Alert) -> Message:
    """What every channel sends for `alert` (rule 4)."""
    url = f"/?session={quote(alert.session_id, safe='')}"
    return Message(
        alert.session_id, alert.seq, alert.title, alert.body, alert.tag, alert.at, url, alert.snooze
    )


class Recorder:
    """The plugin's alert sink (see the module docstring)."""

    def __init__(
        self,
        outbox: OutboxBackend,
        channels: Callable[[], Sequence[Channel]],
        clock: Clock,
        wake: Callable[[], None],
        *,
        ready_timeout: float = READY_TIMEOUT,
    ) -> None:
        self.outbox = outbox
        self.channels = channels
        self.clock = clock
        self.wake = wake
        self.ready = anyio.Event()
        self.ready_timeout = ready_timeout

    async def __call__(self, alerts: Sequence[Alert]) -> None:
        with anyio.move_on_after(self.ready_timeout):
            await self.ready.wait()
        if not self.ready.is_set():
            raise StorageError(f"{self.outbox.description} is not open yet")
        now = self.clock.wall_ms()
        deliveries: list[Delivery] = []
        for channel in self.channels():
            targets = await channel.targets()
            for alert in alerts:
                message = message_of(alert)
                deliveries.extend(Delivery.new(channel.name, t, message, now) for t in targets)
        if deliveries and await self.outbox.add(deliveries):
            self.wake()
