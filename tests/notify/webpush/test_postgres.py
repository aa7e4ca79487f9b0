"""Web Push's records on PostgreSQL: one key pair for every host, the limit held across hosts."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import anyio
import psycopg
import pytest
from dsh_notify.webpush.postgres import PostgresRecords
from dsh_notify.webpush.subscriptions import SubscriptionBody, TooManySubscriptions

from dsh import StorageError, StorageLocation
from tests.support.postgres import PostgresServer

from .conftest import harness
from .pushservice import Browser

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


@pytest.fixture
async def location(postgres: PostgresServer) -> AsyncIterator[StorageLocation]:
    """A schema of its own, as the Host would have made it."""
    schema = f"t_{uuid.uuid4().hex[:16]}"
    async with await psycopg.AsyncConnection.connect(postgres.url, autocommit=True) as connection:
        await connection.execute(f'CREATE SCHEMA "{schema}"')
    yield StorageLocation("postgresql", url=postgres.url, schema=schema)


def body(endpoint: str, browser: Browser | None = None) -> SubscriptionBody:
    return SubscriptionBody.model_validate((browser or Browser()).subscription(endpoint))


async def test_two_hosts_starting_at_once_agree_on_one_key_pair(location: StorageLocation) -> None:
    keys: list[str] = []

    async def start() -> None:
        records = PostgresRecords(location)
        await records.create()
        keys.append((await records.keys()).public_key)

    async with anyio.create_task_group() as group:
        for _ in range(4):
            group.start_soon(start)
    assert len(set(keys)) == 1
    async with harness(location) as test:
        assert (await test.client.get("/api/push/key")).json() == {"publicKey": keys[0]}


async def test_subscriptions_are_shared_updated_by_endpoint_and_limited(
    location: StorageLocation,
) -> None:
    async with harness(location, max_subscriptions=2) as one, harness(location) as two:
        first = await one.client.post(
            "/api/push/subscriptions", json=Browser().subscription("https://p.example/1")
        )
        newer = Browser()
        again = await two.client.post(
            "/api/push/subscriptions", json=newer.subscription("https://p.example/1")
        )
        assert first.json() == again.json()
        await two.client.post(
            "/api/push/subscriptions", json=Browser().subscription("https://p.example/2")
        )
        refused = await one.client.post(
            "/api/push/subscriptions", json=Browser().subscription("https://p.example/3")
        )
        assert refused.status_code == 422
        assert refused.json()["error"]["code"] == "too_many_subscriptions"
        targets = await one.push.channel.targets()
        assert len(targets) == 2 and targets[0] == first.json()["id"]
        records = PostgresRecords(location)
        kept = await records.get(first.json()["id"])
        assert kept is not None and kept.p256dh == newer.p256dh
        assert await records.get("x" * 22) is None
        gone = await two.client.delete(f"/api/push/subscriptions/{first.json()['id']}")
        assert gone.status_code == 204
        assert (
            await one.client.delete(f"/api/push/subscriptions/{first.json()['id']}")
        ).status_code == 404
        assert len(await one.push.channel.targets()) == 1


async def test_concurrent_adds_never_pass_the_limit(location: StorageLocation) -> None:
    records = PostgresRecords(location)
    await records.create()
    refused = 0

    async def add(number: int) -> None:
        nonlocal refused
        try:
            await PostgresRecords(location).add(body(f"https://p.example/{number}"), 3)
        except TooManySubscriptions:
            refused += 1

    async with anyio.create_task_group() as group:
        for number in range(8):
            group.start_soon(add, number)
    assert len(await records.all()) == 3 and refused == 5


async def test_a_corrupt_key_row_is_a_clear_error_and_an_unreachable_database_too(
    location: StorageLocation, postgres: PostgresServer
) -> None:
    records = PostgresRecords(location)
    await records.create()
    async with await psycopg.AsyncConnection.connect(postgres.url, autocommit=True) as connection:
        await connection.execute(
            f'INSERT INTO "{location.schema}".notify_vapid VALUES (1, %s)', ('{"version": 9}',)
        )
    with pytest.raises(StorageError, match="unreadable"):
        await records.keys()
    elsewhere = StorageLocation(
        "postgresql", url="postgresql://dsh:secret@/nowhere?host=/nonexistent"
    )
    with pytest.raises(StorageError) as raised:
        await PostgresRecords(elsewhere).all()
    assert "secret" not in str(raised.value)
    assert "Web Push records in" in str(raised.value)


def test_a_location_without_a_url_is_refused() -> None:
    with pytest.raises(ValueError, match="url"):
        PostgresRecords(StorageLocation("postgresql"))
