"""`PostgresOutbox`: the contract on a real server, and what two hosts sharing it do."""

from __future__ import annotations

import uuid

import anyio
import psycopg
import pytest
from dsh_notify.outbox import OutboxBackend
from dsh_notify.outbox.postgres import PostgresOutbox

from dsh import StorageError
from tests.support.postgres import PostgresServer

from .outbox_contract import OutboxContract
from .support import START_MS, delivery

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


def schema() -> str:
    return f"t_{uuid.uuid4().hex[:16]}"


class TestPostgresOutbox(OutboxContract):
    @pytest.fixture(autouse=True)
    def _server(self, postgres: PostgresServer) -> None:
        self.url = postgres.url
        self.schema = schema()

    async def make(self, keep: int = 1000) -> OutboxBackend:
        outbox = PostgresOutbox(self.url, self.schema, where="test", keep=keep)
        await outbox.open()
        return outbox

    async def reopen(self, outbox: OutboxBackend) -> OutboxBackend:
        # A restarted host is a new owner: the old one's claims hold until their lease ends.
        assert isinstance(outbox, PostgresOutbox)
        await outbox.aclose()
        again = PostgresOutbox(self.url, self.schema, where="test", keep=outbox.keep, lease_ms=0)
        await again.open()
        return again


async def test_hosts_starting_at_once_migrate_once(postgres: PostgresServer) -> None:
    name = schema()
    hosts = [PostgresOutbox(postgres.url, name, where="test") for _ in range(4)]
    async with anyio.create_task_group() as group:
        for host in hosts:
            group.start_soon(host.open)
    for host in hosts:
        await host.aclose()
    assert postgres.psql(f"SELECT count(*) FROM {name}.notify_migrations") == "1"


async def test_two_hosts_claiming_at_once_each_take_a_delivery_once(
    postgres: PostgresServer,
) -> None:
    name = schema()
    first = PostgresOutbox(postgres.url, name, where="test")
    second = PostgresOutbox(postgres.url, name, where="test")
    await first.open()
    await second.open()
    await first.add([delivery(seq) for seq in range(200)])
    taken: list[str] = []

    async def drain(host: PostgresOutbox) -> None:
        while batch := await host.claim("test", START_MS, 7):
            for claimed in batch:
                taken.append(claimed.key)
                done = claimed.moved("done", attempts=1, next_at=START_MS, error=None, now=START_MS)
                assert await host.settle(done)

    async with anyio.create_task_group() as group:
        group.start_soon(drain, first)
        group.start_soon(drain, second)
    assert sorted(taken) == sorted({d.key for d in [delivery(seq) for seq in range(200)]})
    await first.aclose()
    await second.aclose()


async def test_a_crashed_hosts_claim_expires_and_its_settle_is_refused(
    postgres: PostgresServer,
) -> None:
    name = schema()
    crashed = PostgresOutbox(postgres.url, name, where="test", lease_ms=60_000)
    other = PostgresOutbox(postgres.url, name, where="test")
    await crashed.open()
    await crashed.add([delivery(1)])
    [held] = await crashed.claim("test", START_MS, 1)
    assert await other.claim("test", START_MS + 59_999, 1) == []
    assert await other.next_due(["test"]) == START_MS + 60_000
    [taken] = await other.claim("test", START_MS + 60_000, 1)
    late = held.moved("done", attempts=1, next_at=START_MS, error=None, now=START_MS)
    assert not await crashed.settle(late)
    assert await other.settle(taken.moved("done", attempts=1, next_at=0, error=None, now=0))
    await crashed.aclose()
    await other.aclose()


async def test_a_broken_connection_is_a_storage_error_and_opened_again(
    postgres: PostgresServer,
) -> None:
    outbox = PostgresOutbox(postgres.url, schema(), where="test")
    await outbox.open()
    connection = outbox._connection
    assert connection is not None
    postgres.psql(f"SELECT pg_terminate_backend({connection.info.backend_pid})")
    try:
        with pytest.raises(StorageError, match="notify outbox"):
            await outbox.refresh()
        await outbox.refresh()  # a new connection
        assert outbox.counts.pending == 0
    finally:
        await outbox.aclose()
        await outbox.aclose()


async def test_an_unreachable_server_is_a_storage_error_naming_where(
    postgres: PostgresServer,
) -> None:
    outbox = PostgresOutbox(
        f"postgresql://dsh@/nosuchdb?host={postgres.sockets}", "s", where="the test server"
    )
    with pytest.raises(StorageError, match="the test server"):
        await outbox.open()
    await outbox.aclose()


def test_psycopg_is_what_the_outbox_uses() -> None:
    assert psycopg.__version__
