"""`InboxRelay` against an inbox in memory: rows taken in order, once, removed once stored."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import asynccontextmanager

import anyio
import anyio.lowlevel
import pytest

from dsh.host.host import Host
from dsh.persistence.errors import SessionNotFound, StorageError
from dsh.persistence.inbox import Inbox, InboxMessage
from dsh.persistence.memory import MemoryBackend
from dsh.testing import FakeClock, FakeModel
from tests.support.deadlines import until

pytestmark = pytest.mark.anyio


class MemoryInbox(Inbox):
    """The rows of one store, as lists; `orphans` is what `orphaned` answers."""

    def __init__(self) -> None:
        self.rows: list[InboxMessage] = []
        self.orphans: list[str] = []
        self.removed: list[int] = []
        self.fail = False
        self._woken: Callable[[str], None] | None = None
        self._next = 0

    def _check(self) -> None:
        if self.fail:
            raise StorageError("the inbox is unreachable")

    async def post(self, session_id: str, text: str, time_zone: str | None, via: str) -> int:
        self._check()
        self._next += 1
        self.rows.append(InboxMessage(self._next, session_id, text, time_zone, via))
        if self._woken is not None:
            self._woken(session_id)
        return self._next

    def put(self, session_id: str, text: str) -> int:
        """A row another host posted, without a wake-up (a missed notification)."""
        self._next += 1
        self.rows.append(InboxMessage(self._next, session_id, text, None, "elsewhere"))
        return self._next

    async def pending(self, session_id: str) -> list[InboxMessage]:
        self._check()
        return [row for row in self.rows if row.session_id == session_id]

    async def waiting(self, session_ids: Collection[str]) -> set[str]:
        self._check()
        return {row.session_id for row in self.rows if row.session_id in session_ids}

    async def remove(self, ids: Collection[int]) -> None:
        self._check()
        self.removed.extend(sorted(ids))
        self.rows = [row for row in self.rows if row.id not in ids]

    async def orphaned(self) -> list[str]:
        self._check()
        return list(self.orphans)

    async def listen(self, woken: Callable[[str], None]) -> None:
        self._woken = woken
        await anyio.sleep_forever()


class InboxBackend(MemoryBackend):
    def __init__(self) -> None:
        super().__init__()
        self.memory_inbox = MemoryInbox()

    def inbox(self) -> MemoryInbox:
        return self.memory_inbox


@asynccontextmanager
async def relay_host(clock: FakeClock, backend: InboxBackend) -> AsyncIterator[Host]:
    async with Host(backend=backend, model=FakeModel(["one", "two", "three"]), clock=clock) as host:
        yield host


def user_messages(host: Host, session_id: str) -> list[tuple[str, object]]:
    agent = host.agent(session_id)
    assert agent is not None
    return [
        (event.data["text"], event.data["source"])  # type: ignore[index]
        for event in agent.session.scan(types={"message/user"})
    ]


async def test_rows_are_queued_in_order_once_and_removed_once_their_messages_are_stored() -> None:
    clock, backend = FakeClock(), InboxBackend()
    inbox = backend.memory_inbox
    async with relay_host(clock, backend) as host:
        assert host.relays.inbox is not None
        agent = await host.create_session()
        session_id = agent.session.id
        first = await inbox.post(session_id, "first", "Europe/Paris", "b")
        await until(lambda: host.relays.inbox.taken == 1, "the first row to be taken")  # type: ignore[union-attr]
        second = inbox.put(session_id, "second")  # its wake-up was lost
        clock.advance(1)  # the poll finds the second, and removes the first once stored
        await until(lambda: host.relays.inbox.taken == 2, "the poll to take the second")  # type: ignore[union-attr]
        await until(lambda: len(user_messages(host, session_id)) == 2)
        assert user_messages(host, session_id) == [
            ("first", {"kind": "user", "inbox": first}),
            ("second", {"kind": "user", "inbox": second}),
        ]
        event = next(agent.session.scan(types={"message/user"}))
        assert event.data["timeZone"] == "Europe/Paris"  # type: ignore[index]
        assert await host.live.flush(agent.session)
        clock.advance(1)
        await until(lambda: inbox.rows == [], "the rows to be removed")
        assert sorted(inbox.removed) == [first, second]
        clock.advance(1)
        for _ in range(20):
            await anyio.lowlevel.checkpoint()
        assert host.relays.inbox.taken == 2 and len(user_messages(host, session_id)) == 2  # type: ignore[union-attr]


async def test_a_row_whose_message_is_in_the_log_is_removed_not_queued_again() -> None:
    clock, backend = FakeClock(), InboxBackend()
    inbox = backend.memory_inbox
    async with relay_host(clock, backend) as host:
        agent = await host.create_session()
        session_id = agent.session.id
        # A previous owner stored the row's message, then died before removing the row.
        host.live.append(
            agent.session,
            "message/user",
            {"text": "stored already", "source": {"kind": "user", "inbox": 1}},
        )
        assert await host.live.flush(agent.session)
        await host.close_session(session_id, clean=False)
        assert inbox.put(session_id, "stored already") == 1
        await host.resume(session_id)
        await until(lambda: inbox.rows == [], "the row to be removed")
        assert host.relays.inbox is not None and host.relays.inbox.taken == 0
        assert [text for text, _ in user_messages(host, session_id)] == ["stored already"]


async def test_rows_nobody_holds_the_session_for_make_it_live_here() -> None:
    clock, backend = FakeClock(), InboxBackend()
    inbox = backend.memory_inbox
    async with relay_host(clock, backend) as host:
        agent = await host.create_session()
        session_id = agent.session.id
        host.live.append(agent.session, "note/x", {})
        await host.close_session(session_id)
        inbox.put(session_id, "while it was cold")
        inbox.orphans = [session_id]
        clock.advance(1)
        await until(lambda: host.agent(session_id) is not None, "the poll to make it live")
        await until(
            lambda: [t for t, _ in user_messages(host, session_id)] == ["while it was cold"]
        )


async def test_rows_of_a_session_that_is_not_stored_are_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, backend = FakeClock(), InboxBackend()
    inbox = backend.memory_inbox
    async with relay_host(clock, backend) as host:
        inbox.put("0123456789abcdef", "hello?")
        inbox.orphans = ["0123456789abcdef"]
        await until(lambda: clock.sleeping, "the poll to sleep")
        clock.advance(1)
        await until(lambda: inbox.rows == [], "the rows to be dropped")
        inbox.orphans = []
        with pytest.raises(SessionNotFound):
            await host.resume("0123456789abcdef")
    assert "session 0123456789abcdef is not stored; dropping 1 message(s)" in caplog.text


async def test_an_unreachable_inbox_is_logged_once_and_polled_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    clock, backend = FakeClock(), InboxBackend()
    inbox = backend.memory_inbox
    async with relay_host(clock, backend) as host:
        agent = await host.create_session()
        inbox.fail = True
        inbox.put(agent.session.id, "later")
        host.relays.inbox._woken(agent.session.id)  # type: ignore[union-attr]  # a wake-up that fails
        for _ in range(3):
            clock.advance(1)
            for _ in range(10):
                await anyio.lowlevel.checkpoint()
        assert caplog.text.count("polling again every 1 s") == 1
        assert "(taken at the next poll)" in caplog.text
        inbox.fail = False
        clock.advance(1)
        await until(lambda: [t for t, _ in user_messages(host, agent.session.id)] == ["later"])


async def test_without_an_inbox_a_session_live_elsewhere_is_refused() -> None:
    async with Host(backend=MemoryBackend(), model=FakeModel()) as host:
        assert host.relays.inbox is None
        agent = await host.create_session()
        posted = await host.sessions.post_message(agent.session.id, "hi", time_zone="UTC")
        assert posted.agent is agent and posted.resumed is False and posted.owner is None
