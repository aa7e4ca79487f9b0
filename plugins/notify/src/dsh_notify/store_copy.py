"""`store_copy(source, target)`: what `dsh store copy SRC DST` moves of dsh-notify's records.

`NotifyPlugin.dsh_store_copy` calls it while no `dsh web` holds either
store. Each store is opened from the location given — a data dir: the
files `notify-outbox.jsonl`, `vapid.json`, `push-subscriptions.json`;
PostgreSQL: the `notify_*` tables in `url`'s `schema` — as a host opens it on
start (its tables made when missing, its outbox file compacted), and closed
after. In this order, so that a refusal leaves the target as it was:

1. The Web Push key pair and capability secret. The target has none: the
   source's is kept, so the subscriptions made against it and the buttons
   of notifications already shown keep working. The same pair: nothing.
   Another pair: `KeyConflict`, and nothing of notify is copied. The source
   has none: nothing.
2. The outbox: every delivery of the source in its state, attempts, next
   attempt time and last error, added unless the target holds its key
   (`OutboxBackend.add`: the target's wins). A pending one stays pending,
   so the target's host sends it; a claim is not copied. Pruning still
   applies: a finished one that the target's pruning would drop at once
   (beyond `keep` finished ones with the target's own, oldest first by
   `updated`) is left out — else a second run would copy it again.
3. The push subscriptions, by endpoint (one the target has is kept as it
   is), each under its id — the deliveries name it as their target —
   and without the target's `max_subscriptions`: they were accepted once,
   and leaving some behind would silently end a browser's notifications.

A second run finds every record there and changes nothing.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path

import anyio

from dsh import StorageLocation

from .outbox import KEEP_FINISHED, Delivery, OutboxBackend, outbox_for
from .webpush.keys import KEY_FILE, VapidKeys, read_key_file, write_key_file
from .webpush.subscriptions import SUBSCRIPTIONS_FILE, FileSubscriptions, Subscription

__all__ = ["KeyConflict", "store_copy"]


class KeyConflict(Exception):
    """The target keeps another Web Push key pair than the source; the message says what to do."""

    def __init__(self, source: Records, target: Records) -> None:
        super().__init__(
            f"notify: {target.name} already keeps a Web Push key other than {source.name}'s: "
            f"subscriptions made against {source.name} would not work with {target.name}'s key, "
            "so none of notify's records were copied. If the subscriptions made against "
            f"{target.name} are not worth keeping, remove its key ({target.key_place}) "
            "and run the copy again."
        )


def store_copy(
    source: StorageLocation, target: StorageLocation, *, keep: int = KEEP_FINISHED
) -> Awaitable[str | None] | None:
    """Copy from `source` to `target` (see the module docstring); None when either keeps nothing.

    `keep` is the outboxes' bound on finished deliveries (`KEEP_FINISHED`).

    The awaitable resolves to one line for the person, or None when nothing
    needed copying; it raises `KeyConflict`, `dsh.StorageError`,
    `VapidKeyError` or `SubscriptionStoreError` naming the store.
    """
    source_records, target_records = records_at(source, keep), records_at(target, keep)
    if source_records is None or target_records is None:
        return None
    return _copy(source_records, target_records, keep)


async def _copy(source: Records, target: Records, keep: int) -> str | None:
    async with AsyncExitStack() as stack:
        for records in (source, target):
            stack.push_async_callback(records.outbox.aclose)
            await records.open()
        key = await _copy_key(source, target)
        theirs, ours = await source.outbox.records(), await target.outbox.records()
        deliveries = await target.outbox.add(_worth_copying(theirs, ours, keep))
        subscriptions = await target.keep(await source.subscriptions())
    parts = [
        *([_counted(deliveries, "delivery", "deliveries")] if deliveries else []),
        *(["the Web Push key"] if key else []),
        *([_counted(subscriptions, "subscription", "subscriptions")] if subscriptions else []),
    ]
    return f"notify: {', '.join(parts)}" if parts else None


async def _copy_key(source: Records, target: Records) -> bool:
    """Step 1 of the module docstring; whether the key was copied."""
    theirs = await source.keys()
    if theirs is None:
        return False
    ours = await target.keys()
    if ours is None:
        await target.keep_keys(theirs)
        return True
    if ours.to_record() != theirs.to_record():
        raise KeyConflict(source, target)
    return False


def _worth_copying(theirs: list[Delivery], ours: list[Delivery], keep: int) -> list[Delivery]:
    """Those of `theirs` the target lacks, less the finished ones its pruning would drop."""
    held = {d.key for d in ours}
    new = [d for d in theirs if d.key not in held]
    finished = sorted((d for d in [*ours, *new] if d.finished), key=lambda d: (d.updated, d.key))
    dropped = {d.key for d in finished[: max(len(finished) - keep, 0)]}
    return [d for d in new if d.key not in dropped]


def _counted(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


class Records(abc.ABC):
    """dsh-notify's records in one store: the outbox, the key pair, the subscriptions."""

    #: The store, for messages (a PostgreSQL URL without its password).
    name: str
    #: Where its key pair is kept, in words a person can act on.
    key_place: str
    outbox: OutboxBackend

    async def open(self) -> None:
        """Open the outbox and the Web Push records, as a host does on start."""
        await self.outbox.open()

    @abc.abstractmethod
    async def keys(self) -> VapidKeys | None:
        """The kept key pair, None when there is none."""

    @abc.abstractmethod
    async def keep_keys(self, keys: VapidKeys) -> None:
        """Keep `keys` (there is no pair yet)."""

    @abc.abstractmethod
    async def subscriptions(self) -> Sequence[Subscription]:
        """The kept subscriptions."""

    @abc.abstractmethod
    async def keep(self, subscriptions: Sequence[Subscription]) -> int:
        """Keep those of `subscriptions` whose endpoint is not kept, as they are; how many."""


def records_at(location: StorageLocation, keep: int = KEEP_FINISHED) -> Records | None:
    """The records kept at `location`; None for `memory` (nothing outlives a process)."""
    if location.kind == "jsonl" and location.data_dir is not None:
        return FileRecords(location, keep)
    if location.kind == "postgresql" and location.url is not None:
        return PostgresRecordsAt(location, keep)
    return None


class FileRecords(Records):
    """The records of a JSONL data dir: three files in it."""

    def __init__(self, location: StorageLocation, keep: int) -> None:
        assert location.data_dir is not None  # records_at checked
        self.data_dir: Path = location.data_dir
        self.name = f"jsonl:{self.data_dir}"
        self.key_place = str(self.data_dir / KEY_FILE)
        self.outbox = outbox_for(location, keep=keep)
        self._subscriptions = FileSubscriptions(self.data_dir / SUBSCRIPTIONS_FILE)

    async def open(self) -> None:
        await super().open()
        await anyio.to_thread.run_sync(self._subscriptions.load)

    async def keys(self) -> VapidKeys | None:
        return await anyio.to_thread.run_sync(read_key_file, self.data_dir)

    async def keep_keys(self, keys: VapidKeys) -> None:
        await anyio.to_thread.run_sync(write_key_file, self.data_dir, keys)

    async def subscriptions(self) -> Sequence[Subscription]:
        return await self._subscriptions.all()

    async def keep(self, subscriptions: Sequence[Subscription]) -> int:
        return await self._subscriptions.keep(subscriptions)


class PostgresRecordsAt(Records):
    """The records of a PostgreSQL store: the `notify_*` tables in its schema."""

    def __init__(self, location: StorageLocation, keep: int) -> None:
        # psycopg is there: the host copies this store's Sessions with it.
        from .webpush.postgres import PostgresRecords

        schema = location.schema or "public"  # PostgresRecords' own default
        self.name = f"{location.redacted_url} (schema {schema})"
        self.key_place = f'the one row of "{schema}".notify_vapid'
        self.outbox = outbox_for(location, keep=keep)
        self._records = PostgresRecords(location)

    async def open(self) -> None:
        await super().open()
        await self._records.create()

    async def keys(self) -> VapidKeys | None:
        return await self._records.kept_keys()

    async def keep_keys(self, keys: VapidKeys) -> None:
        await self._records.keep_keys(keys)

    async def subscriptions(self) -> Sequence[Subscription]:
        return await self._records.all()

    async def keep(self, subscriptions: Sequence[Subscription]) -> int:
        return await self._records.keep(subscriptions)
