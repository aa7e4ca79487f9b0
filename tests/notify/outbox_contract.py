"""The contract every outbox backend keeps (`OutboxBackend`'s rules), as one suite.

A backend's test module subclasses `OutboxContract` and provides `make(keep)`,
which returns a new, opened backend on a fresh store.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from dsh_notify.outbox import OutboxBackend

from .support import START_MS, delivery

pytestmark = pytest.mark.anyio


class OutboxContract:
    async def make(self, keep: int = 1000) -> OutboxBackend:
        raise NotImplementedError

    async def reopen(self, outbox: OutboxBackend) -> OutboxBackend:
        """The same store as a new backend object would find it (a restart)."""
        raise NotImplementedError

    async def test_an_added_delivery_is_pending_and_claimed_once(self) -> None:
        outbox = await self.make()
        try:
            assert await outbox.add([delivery(1), delivery(2)]) == 2
            await outbox.refresh()
            assert outbox.counts.pending == 2
            first = await outbox.claim("test", START_MS, 1)
            assert [d.message.seq for d in first] == [1]
            second = await outbox.claim("test", START_MS, 5)
            assert [d.message.seq for d in second] == [2]
            assert await outbox.claim("test", START_MS, 5) == []
        finally:
            await outbox.aclose()

    async def test_adding_a_key_again_changes_nothing(self) -> None:
        outbox = await self.make()
        try:
            await outbox.add([delivery(1)])
            [claimed] = await outbox.claim("test", START_MS, 1)
            done = claimed.moved("done", attempts=1, next_at=START_MS, error=None, now=START_MS)
            assert await outbox.settle(done)
            assert await outbox.add([delivery(1), delivery(1)]) == 0
            await outbox.refresh()
            assert outbox.counts.pending == 0
            assert await outbox.claim("test", START_MS + 10**9, 5) == []
        finally:
            await outbox.aclose()

    async def test_only_due_deliveries_of_the_channel_are_claimed_earliest_first(self) -> None:
        outbox = await self.make()
        try:
            later = replace(delivery(1), next_at=START_MS + 5000)
            other = delivery(2, channel="other")
            await outbox.add([later, delivery(3), other])
            assert [d.message.seq for d in await outbox.claim("test", START_MS, 5)] == [3]
            assert await outbox.next_due(["test"]) == START_MS + 5000
            assert await outbox.next_due(["nothing"]) is None
            due = await outbox.claim("test", START_MS + 5000, 5)
            assert [d.message.seq for d in due] == [1]
            assert [d.message for d in due] == [later.message]
        finally:
            await outbox.aclose()

    async def test_a_retry_is_claimable_again_when_due(self) -> None:
        outbox = await self.make()
        try:
            await outbox.add([delivery(1)])
            [claimed] = await outbox.claim("test", START_MS, 1)
            again = claimed.moved(
                "pending", attempts=1, next_at=START_MS + 30_000, error="down", now=START_MS
            )
            assert await outbox.settle(again)
            assert await outbox.claim("test", START_MS + 29_999, 1) == []
            [retried] = await outbox.claim("test", START_MS + 30_000, 1)
            assert (retried.attempts, retried.error) == (1, "down")
        finally:
            await outbox.aclose()

    async def test_settling_without_a_claim_changes_nothing(self) -> None:
        outbox = await self.make()
        try:
            await outbox.add([delivery(1)])
            unclaimed = delivery(1).moved(
                "done", attempts=1, next_at=START_MS, error=None, now=START_MS
            )
            assert not await outbox.settle(unclaimed)
            assert len(await outbox.claim("test", START_MS, 1)) == 1
        finally:
            await outbox.aclose()

    async def test_failed_deliveries_are_counted(self) -> None:
        outbox = await self.make()
        try:
            await outbox.add([delivery(1), delivery(2)])
            for claimed in await outbox.claim("test", START_MS, 2):
                failed = claimed.moved(
                    "failed", attempts=8, next_at=START_MS, error="no", now=START_MS
                )
                assert await outbox.settle(failed)
            await outbox.refresh()
            assert (outbox.counts.pending, outbox.counts.failed) == (0, 2)
        finally:
            await outbox.aclose()

    async def test_the_oldest_finished_deliveries_are_pruned_and_counted(self) -> None:
        outbox = await self.make(keep=4)
        try:
            await outbox.add([delivery(seq) for seq in range(10)] + [delivery(99, "kept")])
            for claimed in await outbox.claim("test", START_MS, 10):
                at = START_MS + claimed.message.seq
                state = "failed" if claimed.message.seq % 2 else "gone"
                finished = claimed.moved(state, attempts=1, next_at=at, error="x", now=at)
                assert await outbox.settle(finished)
            await outbox.refresh()
            counts = outbox.counts
            assert counts.pending == 1  # never pruned
            assert 4 <= 10 - counts.pruned <= 5  # pruned down to `keep`, a little slack allowed
            reopened = await self.reopen(outbox)
            outbox = reopened
            await outbox.refresh()
            assert outbox.counts.pruned == counts.pruned
            assert [d.message.seq for d in await outbox.claim("kept", START_MS, 5)] == [99]
        finally:
            await outbox.aclose()

    async def test_a_restart_finds_pending_deliveries_unclaimed_and_keeps_settled_ones(
        self,
    ) -> None:
        outbox = await self.make()
        try:
            await outbox.add([delivery(1), delivery(2)])
            first, second = await outbox.claim("test", START_MS, 2)
            done = first.moved("done", attempts=1, next_at=START_MS, error=None, now=START_MS)
            assert await outbox.settle(done)
            outbox = await self.reopen(outbox)
            resumed = await outbox.claim("test", START_MS + 10**9, 5)
            assert [d.key for d in resumed] == [second.key]
            assert resumed[0].message == second.message
        finally:
            await outbox.aclose()

    async def test_targets_to_skip_are_neither_claimed_nor_waited_for(self) -> None:
        outbox = await self.make()
        try:
            hanging = replace(delivery(1, target="hanging"), next_at=START_MS)
            later = replace(delivery(2, target="ok"), next_at=START_MS + 5000)
            await outbox.add([hanging, later])
            assert await outbox.next_due(["test"], skip=["hanging"]) == START_MS + 5000
            assert await outbox.claim("test", START_MS, 5, skip=["hanging"]) == []
            claimed = await outbox.claim("test", START_MS + 5000, 5, skip=["hanging"])
            assert [d.target for d in claimed] == ["ok"]
        finally:
            await outbox.aclose()

    async def test_records_are_every_delivery_kept_a_claimed_one_read_as_pending(self) -> None:
        outbox = await self.make()
        try:
            await outbox.add([delivery(1), delivery(2, at=START_MS + 1)])
            first, second = await outbox.claim("test", START_MS + 1, 2)
            failed = first.moved("failed", attempts=8, next_at=START_MS, error="no", now=START_MS)
            assert await outbox.settle(failed)
            assert await outbox.records() == [failed, second]
            outbox = await self.reopen(outbox)
            assert await outbox.records() == [failed, second]
        finally:
            await outbox.aclose()

    async def test_added_deliveries_are_kept_in_the_state_given_and_counted_by_it(self) -> None:
        outbox = await self.make()
        try:
            failed = replace(delivery(1), state="failed", attempts=8, error="no", updated=7)
            gone = replace(delivery(2), state="gone", attempts=1)
            retry = replace(delivery(3), attempts=2, next_at=START_MS + 60_000, error="down")
            assert await outbox.add([failed, gone, retry]) == 3
            assert (outbox.counts.pending, outbox.counts.failed) == (1, 1)
            await outbox.refresh()
            assert (outbox.counts.pending, outbox.counts.failed) == (1, 1)
            outbox = await self.reopen(outbox)
            assert await outbox.records() == [failed, gone, retry]
            assert await outbox.claim("test", START_MS + 59_999, 5) == []
            assert await outbox.claim("test", START_MS + 60_000, 5) == [retry]
        finally:
            await outbox.aclose()
