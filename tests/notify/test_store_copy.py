"""`store_copy`: `dsh store copy` moves the outbox, the Web Push key and the subscriptions."""

from __future__ import annotations

import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from dsh_notify.outbox import Delivery, JsonlOutbox
from dsh_notify.plugin import NotifyPlugin
from dsh_notify.store_copy import KeyConflict, Records, records_at, store_copy
from dsh_notify.webpush.keys import VapidKeys
from dsh_notify.webpush.subscriptions import Subscription, new_id

from dsh import StorageLocation
from dsh.testing import arun_cli, plugin_host
from tests.support.postgres import PostgresServer

from .support import START_MS, delivery

pytestmark = pytest.mark.anyio


def jsonl(directory: Path) -> StorageLocation:
    directory.mkdir(exist_ok=True)
    return StorageLocation("jsonl", data_dir=directory)


def postgresql(url: str) -> StorageLocation:
    return StorageLocation("postgresql", url=url, schema=f"t_{uuid.uuid4().hex[:16]}")


def subscription(endpoint: str) -> Subscription:
    return Subscription(new_id(), endpoint, f"p256dh of {endpoint}", f"auth of {endpoint}")


def at(location: StorageLocation) -> Records:
    records = records_at(location)
    assert records is not None
    return records


async def seed(
    location: StorageLocation,
    deliveries: list[Delivery],
    keys: VapidKeys | None = None,
    subscriptions: list[Subscription] | None = None,
) -> None:
    records = at(location)
    await records.open()
    try:
        await records.outbox.add(deliveries)
        if keys is not None:
            await records.keep_keys(keys)
        await records.keep(subscriptions or [])
    finally:
        await records.outbox.aclose()


async def kept(
    location: StorageLocation,
) -> tuple[list[Delivery], dict[str, object] | None, list[Subscription]]:
    """What `location` keeps: deliveries, the key pair's record, subscriptions."""
    records = at(location)
    await records.open()
    try:
        keys = await records.keys()
        return (
            await records.outbox.records(),
            None if keys is None else keys.to_record(),
            list(await records.subscriptions()),
        )
    finally:
        await records.outbox.aclose()


async def copy(source: StorageLocation, target: StorageLocation, keep: int = 1000) -> str | None:
    copying = store_copy(source, target, keep=keep)
    assert copying is not None
    return await copying


class Source:
    """A source holding a key, two subscriptions and a delivery in each state."""

    def __init__(self) -> None:
        self.keys = VapidKeys.new()
        self.subscriptions = [
            subscription("https://push.test/a"),
            subscription("https://push.test/b"),
        ]
        first = self.subscriptions[0].id
        self.deliveries = [
            replace(delivery(1, "webpush", first), attempts=2, next_at=START_MS + 60_000,
                    error="the push service answered 503"),
            replace(delivery(2), state="done", attempts=1, updated=START_MS + 5),
            replace(delivery(3), state="failed", attempts=8, error="rejected"),
            replace(delivery(4, "webpush", "vanished"), state="gone", attempts=1),
        ]  # fmt: skip

    async def put(self, location: StorageLocation) -> None:
        await seed(location, self.deliveries, self.keys, self.subscriptions)


async def check_moved(source: StorageLocation, target: StorageLocation) -> None:
    """Copy `Source`'s records twice: all of them arrive, the second run changes nothing."""
    records = Source()
    await records.put(source)
    assert await copy(source, target) == "notify: 4 deliveries, the Web Push key, 2 subscriptions"
    deliveries, keys, subscriptions = await kept(target)
    assert deliveries == records.deliveries
    assert keys == records.keys.to_record()
    # One transaction's rows share `created`: PostgreSQL then orders them by id.
    assert sorted(subscriptions, key=lambda it: it.id) == sorted(
        records.subscriptions, key=lambda it: it.id
    )
    assert await copy(source, target) is None
    assert await kept(target) == (deliveries, keys, subscriptions)
    # A pending delivery stays pending: the target's host sends it when due.
    target_records = at(target)
    await target_records.open()
    try:
        claimed = await target_records.outbox.claim("webpush", START_MS + 60_000, 5)
        assert claimed == records.deliveries[:1]
    finally:
        await target_records.outbox.aclose()


async def test_jsonl_to_jsonl_moves_every_record_through_the_plugin_hook(tmp_path: Path) -> None:
    source, target = jsonl(tmp_path / "a"), jsonl(tmp_path / "b")
    records = Source()
    await records.put(source)
    async with plugin_host(NotifyPlugin) as test:
        # As `dsh store copy` calls it: through the plugin manager, one awaitable per plugin.
        [copying] = test.host.pm.hook.dsh_store_copy(source=source, target=target)
        assert await copying == "notify: 4 deliveries, the Web Push key, 2 subscriptions"
        assert test.host.pm.hook.dsh_store_copy(source=StorageLocation(), target=target) == []
    assert await kept(target) == (
        records.deliveries,
        records.keys.to_record(),
        records.subscriptions,
    )
    assert (tmp_path / "b" / "vapid.json").stat().st_mode & 0o777 == 0o600


async def test_a_second_jsonl_copy_changes_nothing(tmp_path: Path) -> None:
    await check_moved(jsonl(tmp_path / "a"), jsonl(tmp_path / "b"))


@pytest.mark.pg
async def test_jsonl_to_postgresql_moves_every_record(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    await check_moved(jsonl(tmp_path / "a"), postgresql(postgres.url))


@pytest.mark.pg
async def test_postgresql_to_jsonl_moves_every_record(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    await check_moved(postgresql(postgres.url), jsonl(tmp_path / "b"))


async def test_what_the_target_holds_wins_and_the_same_key_is_not_copied(tmp_path: Path) -> None:
    source, target = jsonl(tmp_path / "a"), jsonl(tmp_path / "b")
    keys = VapidKeys.new()
    same_endpoint = subscription("https://push.test/a")
    done = replace(delivery(1), state="done", attempts=1)
    await seed(source, [delivery(1), delivery(2)], keys, [subscription("https://push.test/a")])
    await seed(target, [done], keys, [same_endpoint, subscription("https://push.test/c")])
    assert await copy(source, target) == "notify: 1 delivery"
    deliveries, kept_keys, subscriptions = await kept(target)
    assert deliveries == [done, delivery(2)]
    assert kept_keys == keys.to_record()
    assert subscriptions[0] == same_endpoint


async def test_finished_deliveries_the_target_would_prune_at_once_are_left_out(
    tmp_path: Path,
) -> None:
    source, target = jsonl(tmp_path / "a"), jsonl(tmp_path / "b")

    def done(seq: int, updated: int) -> Delivery:
        return replace(delivery(seq), state="done", attempts=1, updated=updated)

    theirs = [done(1, 10), done(3, 30), done(5, 50), done(7, 70), delivery(9)]
    ours = [done(2, 20), done(6, 60)]
    await seed(source, theirs)
    await seed(target, ours)
    assert await copy(source, target, keep=4) == "notify: 4 deliveries"
    assert await copy(source, target, keep=4) is None
    reopened = JsonlOutbox(tmp_path / "b", keep=4)  # what the target's host does on start
    await reopened.open()
    try:
        kept_seqs = sorted(d.message.seq for d in await reopened.records())
        # Only the target's own oldest went: none of what was copied is pruned at once.
        assert (kept_seqs, reopened.counts.pruned) == ([3, 5, 6, 7, 9], 1)
    finally:
        await reopened.aclose()
    assert await copy(source, target, keep=4) is None


async def test_one_subscription_alone_is_copied_without_the_target_s_limit(
    tmp_path: Path,
) -> None:
    source, target = jsonl(tmp_path / "a"), jsonl(tmp_path / "b")
    many = [subscription(f"https://push.test/{n}") for n in range(3)]
    await seed(source, [], subscriptions=many[:1])
    await seed(target, [], subscriptions=many[1:])
    async with plugin_host(NotifyPlugin, config={"max_subscriptions": 2}) as test:
        plugin = test.plugin
        assert isinstance(plugin, NotifyPlugin)
        copying = plugin.dsh_store_copy(source=source, target=target)
        assert copying is not None
        assert await copying == "notify: 1 subscription"
    assert len((await kept(target))[2]) == 3


async def test_another_key_in_the_target_stops_the_copy_naming_both_stores(tmp_path: Path) -> None:
    source, target = jsonl(tmp_path / "a"), jsonl(tmp_path / "b")
    await seed(source, [delivery(1)], VapidKeys.new(), [subscription("https://push.test/a")])
    theirs = VapidKeys.new()
    await seed(target, [], theirs)
    with pytest.raises(KeyConflict) as refused:
        await copy(source, target)
    message = str(refused.value)
    assert f"jsonl:{tmp_path / 'a'}" in message
    assert f"jsonl:{tmp_path / 'b'}" in message
    assert "would not work with" in message
    assert str(tmp_path / "b" / "vapid.json") in message
    assert await kept(target) == ([], theirs.to_record(), [])


@pytest.mark.pg
async def test_a_key_conflict_in_postgresql_says_which_row_to_remove(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    source, target = jsonl(tmp_path / "a"), postgresql(postgres.url)
    await seed(source, [], VapidKeys.new())
    await seed(target, [], VapidKeys.new())
    with pytest.raises(KeyConflict, match=rf'the one row of "{target.schema}".notify_vapid'):
        await copy(source, target)


async def test_an_empty_source_copies_nothing(tmp_path: Path) -> None:
    assert await copy(jsonl(tmp_path / "a"), jsonl(tmp_path / "b")) is None
    assert await kept(jsonl(tmp_path / "b")) == ([], None, [])


def test_a_store_in_memory_keeps_nothing_to_copy(tmp_path: Path) -> None:
    memory = StorageLocation()
    assert store_copy(memory, memory) is None
    assert store_copy(jsonl(tmp_path), memory) is None
    assert store_copy(memory, jsonl(tmp_path)) is None


async def test_dsh_store_copy_moves_notify_records_with_the_overlay(tmp_path: Path) -> None:
    """The command a person types: the host's records, then notify's, a line for each."""
    source, target = jsonl(tmp_path / "a"), jsonl(tmp_path / "b")
    records = Source()
    await records.put(source)
    argv = ("store", "copy", f"jsonl:{tmp_path / 'a'}", f"jsonl:{tmp_path / 'b'}")
    result = await arun_cli(*argv, plugins={"notify": {"web_push": True}})
    assert result.code == 0, result.err
    assert result.out.splitlines()[-1] == (
        "notify: 4 deliveries, the Web Push key, 2 subscriptions"
    )
    assert await kept(target) == (
        records.deliveries,
        records.keys.to_record(),
        records.subscriptions,
    )
    again = await arun_cli(*argv, plugins={"notify": {"web_push": True}})
    assert again.code == 0, again.err
    assert "notify:" not in again.out  # nothing left to copy
