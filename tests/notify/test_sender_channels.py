"""The sender with real parts: Apprise to a webhook that is down, then up; two hosts on one
PostgreSQL outbox."""

from __future__ import annotations

import uuid

import anyio
import pytest
from dsh_notify.apprise_channel import AppriseChannel
from dsh_notify.backoff import CAP_SECONDS
from dsh_notify.measures import DeliveryMeasures
from dsh_notify.outbox import Delivery, MemoryOutbox, OutboxBackend
from dsh_notify.outbox.postgres import PostgresOutbox
from dsh_notify.sender import Sender

from dsh import Metrics, Scope
from dsh.testing import FakeClock
from tests.support.deadlines import until
from tests.support.postgres import PostgresServer

from .receivers import webhook
from .support import START_MS, ScriptedChannel, message

pytestmark = pytest.mark.anyio


def sender(outbox: OutboxBackend, clock: FakeClock, scope: Scope) -> Sender:
    measures = DeliveryMeasures(Metrics(), scope, lambda: 0)
    return Sender(outbox, clock, measures, max_attempts=8)


async def test_a_webhook_down_for_three_attempts_then_up_gets_the_message_once() -> None:
    clock, scope, outbox = FakeClock(), Scope("test"), MemoryOutbox()
    with webhook() as hook:
        hook.down = 3
        channel = AppriseChannel.from_urls("notify", [hook.url])
        [target] = await channel.targets()
        running = sender(outbox, clock, scope)
        running.add(channel)
        await outbox.add([Delivery.new("apprise", target, message(7), clock.wall_ms())])
        key = Delivery.new("apprise", target, message(7), 0).key
        async with anyio.create_task_group() as group:
            group.start_soon(running.run)
            for attempt in (1, 2, 3):
                await until(
                    lambda a=attempt: outbox.state.deliveries[key].attempts == a, f"send {attempt}"
                )
                assert outbox.state.deliveries[key].state == "pending"
                clock.advance(CAP_SECONDS)
            await until(lambda: outbox.state.deliveries[key].state == "done", "done")
            group.cancel_scope.cancel()
    assert (hook.refused, len(hook.received)) == (3, 1)
    assert hook.received[0]["title"] == "reminder 7"
    assert outbox.state.deliveries[key].attempts == 4
    await scope.aclose()


@pytest.mark.pg
async def test_two_hosts_sending_from_one_postgresql_outbox_send_each_delivery_once(
    postgres: PostgresServer,
) -> None:
    schema = f"t_{uuid.uuid4().hex[:16]}"
    clock, scope = FakeClock(), Scope("test")
    channel = ScriptedChannel(target_ids=["t1"])
    outboxes = [PostgresOutbox(postgres.url, schema, where="test") for _ in range(2)]
    for outbox in outboxes:
        await outbox.open()
    deliveries = [Delivery.new("test", "t1", message(seq), START_MS) for seq in range(60)]
    await outboxes[0].add(deliveries)
    async with anyio.create_task_group() as group:
        for outbox in outboxes:
            running = sender(outbox, clock, scope)
            running.add(channel)
            group.start_soon(running.run)

        async def all_done() -> bool:
            await outboxes[0].refresh()
            return outboxes[0].counts.pending == 0

        with anyio.fail_after(30):
            while not await all_done():  # noqa: ASYNC110 — the database has no event to wait on
                await anyio.sleep(0.02)
        group.cancel_scope.cancel()
    assert sorted(seq for _, seq in channel.sent) == list(range(60))
    for outbox in outboxes:
        await outbox.aclose()
    await scope.aclose()
