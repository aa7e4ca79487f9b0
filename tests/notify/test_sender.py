"""`Sender`: sends due deliveries, settles only after an answer, backs off and gives up."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import pytest
from dsh_notify.backoff import CAP_SECONDS, retry_delay, storage_delay
from dsh_notify.channel import Gone, Message, Outcome, Rejected, Retry
from dsh_notify.measures import DeliveryMeasures
from dsh_notify.outbox import Delivery, MemoryOutbox
from dsh_notify.sender import LOCAL_POLL_SECONDS, Sender

from dsh import Metrics, Scope, StorageError
from dsh.testing import FakeClock
from tests.support.deadlines import until

from .support import START_MS, ScriptedChannel, delivery

pytestmark = pytest.mark.anyio


@dataclass
class Running:
    sender: Sender
    outbox: MemoryOutbox
    clock: FakeClock
    channel: ScriptedChannel
    metrics: Metrics

    def count(self, outcome: str, channel: str = "test") -> float:
        value = self.metrics.registry.get_sample_value(
            "dsh_notify_deliveries_total", {"channel": channel, "outcome": outcome}
        )
        return value or 0.0

    def state(self, seq: int = 1) -> Delivery:
        return self.outbox.state.deliveries[delivery(seq).key]

    async def add(self, *seqs: int) -> None:
        await self.outbox.add([delivery(seq, at=self.clock.wall_ms()) for seq in seqs])
        self.sender.wake()


@asynccontextmanager
async def running(
    channel: ScriptedChannel | None = None,
    *,
    outbox: MemoryOutbox | None = None,
    max_attempts: int = 8,
    concurrency: int = 4,
    send_timeout: float = 60.0,
) -> AsyncIterator[Running]:
    clock = FakeClock()
    metrics = Metrics()
    scope = Scope("test")
    outbox = outbox or MemoryOutbox()
    measures = DeliveryMeasures(metrics, scope, lambda: outbox.counts.pruned)
    sender = Sender(
        outbox,
        clock,
        measures,
        max_attempts=max_attempts,
        concurrency=concurrency,
        send_timeout=send_timeout,
        rng=random.Random(7),
    )
    channel = channel or ScriptedChannel()
    sender.add(channel)
    async with anyio.create_task_group() as group:
        group.start_soon(sender.run)
        try:
            yield Running(sender, outbox, clock, channel, metrics)
        finally:
            group.cancel_scope.cancel()
    await scope.aclose()


async def test_a_delivery_is_done_only_after_the_channel_accepted_it() -> None:
    hold = anyio.Event()
    async with running(ScriptedChannel(hold=hold)) as run:
        await run.add(1)
        await until(lambda: run.channel.sent == [("t1", 1)], "the send")
        assert run.state().state == "pending"
        hold.set()
        await until(lambda: run.state().state == "done", "done")
        assert run.state().attempts == 1
        assert run.count("accepted") == 1
        assert run.outbox.counts.pending == 0


async def test_a_retry_backs_off_exponentially_then_fails_at_max_attempts() -> None:
    channel = ScriptedChannel()
    channel.script.extend(Retry("down") for _ in range(3))
    async with running(channel, max_attempts=3) as run:
        await run.add(1)
        waits = []
        for attempt in (1, 2):
            await until(lambda a=attempt: run.state().attempts == a, f"attempt {attempt}")
            assert run.state().state == "pending"
            wait = (run.state().next_at - run.clock.wall_ms()) / 1000
            waits.append(wait)
            assert run.sender.failing == {"test": START_MS}
            run.clock.advance(wait - 0.001)
            await anyio.wait_all_tasks_blocked()  # the sender had every chance to send
            assert len(run.channel.sent) == attempt  # not a moment early
            run.clock.advance(0.001)
        await until(lambda: run.state().state == "failed", "failed")
        assert 24 <= waits[0] <= 36 and 48 <= waits[1] <= 72
        assert (run.state().attempts, run.state().error) == (3, "down")
        assert (run.count("retried"), run.count("failed")) == (2, 1)
        assert run.outbox.counts.failed == 1


async def test_a_retry_honours_what_the_service_asked_for() -> None:
    channel = ScriptedChannel()
    channel.script.append(Retry("slow down", after=600.0))
    async with running(channel) as run:
        await run.add(1)
        await until(lambda: run.state().attempts == 1, "the first send")
        assert run.state().next_at - run.clock.wall_ms() == 600_000


async def test_acceptance_ends_a_channels_failing_streak() -> None:
    channel = ScriptedChannel()
    channel.script.append(Retry("down"))
    async with running(channel) as run:
        await run.add(1)
        await until(lambda: run.sender.failing, "failing")
        run.clock.advance(CAP_SECONDS)
        await until(lambda: run.state().state == "done", "done")
        assert run.sender.failing == {}


async def test_gone_and_rejected_end_a_delivery_at_once() -> None:
    channel = ScriptedChannel()
    channel.script.extend([Gone("unsubscribed"), Rejected("bad request")])
    async with running(channel, concurrency=1) as run:
        await run.add(1, 2)
        await until(lambda: run.state(2).state != "pending", "both")
        assert (run.state(1).state, run.state(2).state) == ("gone", "failed")
        assert (run.state(1).error, run.state(2).error) == ("unsubscribed", "bad request")
        assert (run.count("gone"), run.count("failed")) == (1, 1)


async def test_a_channel_that_raises_or_hangs_is_retried() -> None:
    channel = ScriptedChannel()
    channel.script.append(ValueError("https://token@example/ leaked"))
    async with running(channel, send_timeout=0.05) as run:
        await run.add(1)
        await until(lambda: run.state().attempts == 1, "the first send")
        assert run.state().error == "the test channel failed (ValueError)"
        run.channel.hold = anyio.Event()  # the next send never answers
        run.clock.advance(CAP_SECONDS)
        await until(lambda: run.state().attempts == 2, "the timed-out send")
        assert run.state().error == "no answer within 0.05 s"


async def test_a_slow_channel_fills_only_its_own_slots() -> None:
    slow = ScriptedChannel(name="slow", hold=anyio.Event())
    async with running(slow, concurrency=2) as run:
        fast = ScriptedChannel(name="fast")
        run.sender.add(fast)
        now = run.clock.wall_ms()
        await run.outbox.add([delivery(seq, "slow", at=now) for seq in range(5)])
        await run.outbox.add([delivery(seq, "fast", at=now) for seq in range(5)])
        run.sender.wake()
        await until(lambda: len(fast.sent) == 5, "every fast send")
        assert len(slow.sent) == 2
        slow.hold.set()  # type: ignore[union-attr]
        await until(lambda: run.outbox.counts.pending == 0, "the slow ones too")
        assert len(slow.sent) == 5


async def test_a_hanging_target_holds_at_most_its_share_of_the_channel() -> None:
    class Hanging(ScriptedChannel):
        async def send(self, target: str, message: Message) -> Outcome:
            if target == "hanging":
                self.sent.append((target, message.seq))
                await anyio.Event().wait()  # never answers
            return await super().send(target, message)

    channel = Hanging(target_ids=["hanging", "ok"])
    async with running(channel) as run:
        now = run.clock.wall_ms()
        await run.outbox.add([delivery(seq, target="hanging", at=now) for seq in range(5)])
        await run.outbox.add([delivery(seq, target="ok", at=now) for seq in range(5)])
        run.sender.wake()
        await until(lambda: len([s for s in channel.sent if s[0] == "ok"]) == 5, "the ok ones")
        assert len([s for s in channel.sent if s[0] == "hanging"]) == 2
        await until(lambda: run.clock.sleeps[-1:] == [LOCAL_POLL_SECONDS], "an idle wait")


class FlakyOutbox(MemoryOutbox):
    """Storage that refuses the first `claims` claims and `settles` settles."""

    def __init__(self, claims: int = 0, settles: int = 0) -> None:
        super().__init__()
        self.claims, self.settles = claims, settles

    async def claim(
        self, channel: str, now: int, limit: int, *, skip: Collection[str] = ()
    ) -> list[Delivery]:
        if self.claims:
            self.claims -= 1
            raise StorageError("disk on fire")
        return await super().claim(channel, now, limit, skip=skip)

    async def settle(self, delivery: Delivery) -> bool:
        if self.settles:
            self.settles -= 1
            raise StorageError("disk on fire")
        return await super().settle(delivery)


async def test_storage_refusals_are_waited_out_and_nothing_is_sent_twice() -> None:
    outbox = FlakyOutbox(claims=2, settles=2)
    async with running(outbox=outbox) as run:
        await run.add(1)
        await until(lambda: run.clock.sleeps[-1:] == [1.0], "the first wait")
        run.clock.advance(1.0)
        await until(lambda: run.clock.sleeps[-1:] == [2.0], "the second wait")
        run.clock.advance(2.0)
        await until(lambda: run.channel.sent, "the send")
        await until(lambda: run.clock.sleeps.count(1.0) == 2, "a wait to record")
        run.clock.advance(1.0)
        await until(lambda: run.clock.sleeps.count(2.0) == 2, "a second wait to record")
        run.clock.advance(2.0)
        await until(lambda: run.state().state == "done", "done")
        assert run.channel.sent == [("t1", 1)]


async def test_a_settle_the_outbox_refuses_is_not_sent_again() -> None:
    class Lost(MemoryOutbox):
        async def settle(self, delivery: Delivery) -> bool:
            self.state.claimed.discard(delivery.key)
            return False

    async with running(outbox=Lost()) as run:
        await run.add(1)
        await until(lambda: run.count("accepted") == 1, "the send counted")
        assert run.channel.sent == [("t1", 1)]


async def test_with_nothing_due_it_sleeps_until_the_poll() -> None:
    async with running() as run:
        await until(lambda: run.clock.sleeps == [LOCAL_POLL_SECONDS], "the idle sleep")
        run.clock.advance(LOCAL_POLL_SECONDS)
        await until(lambda: len(run.clock.sleeps) == 2, "a second round")


def test_the_backoff_adds_up_to_about_an_hour() -> None:
    rng = random.Random(1)
    total = sum(retry_delay(n, rng=rng) for n in range(1, 8))
    assert 0.8 * 3690 <= total <= 1.2 * 3690
    assert retry_delay(1, 10**9, rng=rng) == 6 * 3600
    assert [storage_delay(n) for n in (1, 2, 8)] == [1.0, 2.0, 60.0]
