"""`Sender`: takes due deliveries from the outbox and sends them, off every other path.

It runs as one task of the plugin (in the Host's task group, cancelled with
the plugin's scope); the alert sink only records (`recorder`), so neither a
reminder's dispatch nor a turn ever waits for a channel. Rules:

1. Each round claims, per channel, at most as many due deliveries as that
   channel has free send slots (`concurrency`, 4 by default), and none to a
   target that already has `per_target` (2) sends in flight: a slow or
   failing channel fills its own slots and no other's, and a slow target
   (one Apprise URL that hangs) at most half of its channel's.
2. A delivery is settled only after its channel answered (`channel`'s
   outcomes): `Accepted` → `done`; `Retry` → pending again after
   `backoff.retry_delay` (honouring the service's `after`), or `failed` once
   `max_attempts` sends were made; `Gone` → `gone`; `Rejected` → `failed`.
   A send that raises, or gives no answer within `send_timeout`, is a
   `Retry` (its reason names only the exception's type: a message may quote
   a URL with a token in it).
3. Recording the settlement is retried until storage takes it (with the
   claim held, so nothing sends it again meanwhile): a crash in between is
   the named window of DESIGN "dsh-notify's outbox" — the channel accepted,
   the record says pending, and the next start sends it once more.
4. Between rounds it sleeps until the next delivery is due, or until woken
   (`wake()`: new deliveries, a freed slot), but at most `poll_seconds` (a
   shared outbox: other hosts add and release work too).
5. `failing` maps a channel to when (epoch ms) it started failing — the
   first `Retry` or `Rejected` after its last `Accepted` — for the page's
   quiet status; in memory only.

Time is the Host's clock (`Clock`): tests drive it with `dsh.testing.FakeClock`.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from typing import TYPE_CHECKING

import anyio

from dsh import StorageError

from .backoff import retry_delay, storage_delay
from .channel import Accepted, Channel, Gone, Outcome, Retry
from .measures import DeliveryMeasures
from .measures import Outcome as Label

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from dsh import Clock

    from .outbox import Delivery, OutboxBackend
    from .outbox.delivery import State

__all__ = ["LOCAL_POLL_SECONDS", "SEND_TIMEOUT", "SHARED_POLL_SECONDS", "Sender"]

log = logging.getLogger(__name__)

SEND_TIMEOUT = 120.0
LOCAL_POLL_SECONDS = 60.0
SHARED_POLL_SECONDS = 2.0
CONCURRENCY = 4
PER_TARGET = 2


class Sender:
    """Sends what the outbox holds (see the module docstring)."""

    def __init__(
        self,
        outbox: OutboxBackend,
        clock: Clock,
        measures: DeliveryMeasures,
        *,
        max_attempts: int,
        concurrency: int = CONCURRENCY,
        per_target: int = PER_TARGET,
        send_timeout: float = SEND_TIMEOUT,
        rng: random.Random | None = None,
    ) -> None:
        self.outbox = outbox
        self.clock = clock
        self.measures = measures
        self.max_attempts = max_attempts
        self.concurrency = concurrency
        self.per_target = per_target
        self.send_timeout = send_timeout
        self.poll_seconds = SHARED_POLL_SECONDS if outbox.shared else LOCAL_POLL_SECONDS
        self.channels: dict[str, Channel] = {}
        self.failing: dict[str, int] = {}
        self._rng = rng or random.Random()
        self._busy: dict[str, int] = {}
        self._targets: Counter[tuple[str, str]] = Counter()
        self._wakeup = anyio.Event()

    def add(self, channel: Channel) -> None:
        """Send `channel`'s deliveries from the next round on."""
        self.channels[channel.name] = channel
        self._busy.setdefault(channel.name, 0)

    def wake(self) -> None:
        """Start the next round now (new deliveries, a freed slot)."""
        self._wakeup.set()

    async def run(self) -> None:
        """Send until cancelled (rule 4)."""
        trouble = 0
        async with anyio.create_task_group() as sends:
            while True:
                self._wakeup = anyio.Event()
                try:
                    delay = await self._round(sends)
                    trouble = 0
                except StorageError as error:
                    trouble += 1
                    delay = storage_delay(trouble)
                    log.warning("notify: %s; trying again in %g s", error, delay)
                await self._nap(delay)

    async def _round(self, sends: TaskGroup) -> float:
        now = self.clock.wall_ms()
        for name, channel in self.channels.items():
            free = self.concurrency - self._busy[name]
            if free > 0:
                full = [
                    t for (c, t), n in self._targets.items() if c == name and n >= self.per_target
                ]
                for delivery in await self.outbox.claim(name, now, free, skip=full):
                    self._busy[name] += 1
                    self._targets[name, delivery.target] += 1
                    sends.start_soon(self._deliver, channel, delivery)
        await self.outbox.refresh()
        open_channels = [n for n in self.channels if self._busy[n] < self.concurrency]
        full = [target for name in open_channels for target in self._full(name)]
        due = await self.outbox.next_due(open_channels, skip=full) if open_channels else None
        if due is None:
            return self.poll_seconds
        return min(max(due - now, 0) / 1000, self.poll_seconds)

    def _full(self, channel: str) -> list[str]:
        """The targets of `channel` with `per_target` sends in flight."""
        return [t for (c, t), n in self._targets.items() if c == channel and n >= self.per_target]

    async def _nap(self, seconds: float) -> None:
        async with anyio.create_task_group() as nap:

            async def sleep() -> None:
                await self.clock.sleep(seconds)
                nap.cancel_scope.cancel()

            async def woken() -> None:
                await self._wakeup.wait()
                nap.cancel_scope.cancel()

            nap.start_soon(sleep)
            nap.start_soon(woken)

    async def _deliver(self, channel: Channel, delivery: Delivery) -> None:
        try:
            outcome = await self._send(channel, delivery)
            moved, label = self._after(channel.name, delivery, outcome)
            await self._record(moved)
            self.measures.sent(channel.name, label)
        finally:
            self._busy[channel.name] -= 1
            self._targets[channel.name, delivery.target] -= 1
            self._targets += Counter()  # drops the targets with nothing in flight
            self.wake()

    async def _send(self, channel: Channel, delivery: Delivery) -> Outcome:
        with anyio.move_on_after(self.send_timeout):
            try:
                return await channel.send(delivery.target, delivery.message)
            except Exception as error:
                log.error(
                    "notify: channel %s raised %s sending %s (a bug of the channel); retried",
                    channel.name,
                    type(error).__name__,
                    delivery.key,
                )
                return Retry(f"the {channel.name} channel failed ({type(error).__name__})")
        return Retry(f"no answer within {self.send_timeout:g} s")

    def _after(self, name: str, delivery: Delivery, outcome: Outcome) -> tuple[Delivery, Label]:
        """The delivery after `outcome`, and its metric label (rule 2)."""
        now = self.clock.wall_ms()
        attempts = delivery.attempts + 1
        error = None if isinstance(outcome, Accepted) else outcome.reason
        state: State
        label: Label
        next_at = now
        if isinstance(outcome, Accepted):
            self.failing.pop(name, None)
            state, label = "done", "accepted"
        elif isinstance(outcome, Gone):
            state, label = "gone", "gone"
        elif isinstance(outcome, Retry) and attempts < self.max_attempts:
            self.failing.setdefault(name, now)
            next_at += round(retry_delay(attempts, outcome.after, rng=self._rng) * 1000)
            state, label = "pending", "retried"
        else:
            self.failing.setdefault(name, now)
            log.warning("notify: %s failed after %d sends: %s", delivery.key, attempts, error)
            state, label = "failed", "failed"
        moved = delivery.moved(state, attempts=attempts, next_at=next_at, error=error, now=now)
        return moved, label

    async def _record(self, moved: Delivery) -> None:
        """Settle `moved` in the outbox, trying until storage takes it (rule 3)."""
        trouble = 0
        while True:
            try:
                settled = await self.outbox.settle(moved)
            except StorageError as error:
                trouble += 1
                delay = storage_delay(trouble)
                log.warning("notify: %s; recording it again in %g s", error, delay)
                await self.clock.sleep(delay)
                continue
            if not settled:
                log.warning(
                    "notify: %s was taken over by another host before it was recorded",
                    moved.key,
                )
            return
