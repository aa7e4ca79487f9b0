"""`Sessions`: titles, deletion and stopping a turn by id; with them, empty Sessions
going to the trash (`Liveness`) and the list rows (`Catalogue`).

(`test_host.py` covers lifecycles, publication and storage reads; these are the
operations behind `PATCH`, `DELETE`, `/cancel` and `?q=`.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import ValidationError

from dsh import JsonLike, SessionLog, hookimpl
from dsh.host.errors import PersistenceUnavailable
from dsh.host.host import Host
from dsh.models.base import ModelReply, ModelRequest
from dsh.persistence import JsonlBackend
from dsh.persistence.errors import SessionExists, SessionNotFound
from dsh.persistence.memory import MemoryBackend
from dsh.session.errors import InvalidSessionId
from dsh.session.log import Session
from dsh.session.types import END_SEED
from dsh.testing import FakeClock
from dsh.testing.faults import FaultyBackend
from tests.support.deadlines import WAIT, until

pytestmark = pytest.mark.anyio


class GatedModel:
    """Answers "done" — after `gate` is set, when there is one (a turn a test can stop)."""

    name = "gated"

    def __init__(self) -> None:
        self.gate: anyio.Event | None = None
        self.entered = anyio.Event()

    async def complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
    ) -> ModelReply:
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        return ModelReply(text="done")


class Counting:
    """Summarises a Session for the list: how many person's messages it holds."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def dsh_session_summary(self, session: SessionLog) -> JsonLike:
        self.calls += 1
        count = sum(1 for _ in session.scan(types={"message/user"}))
        return {"messages": count} if count else None


class BrokenSummary:
    @hookimpl
    def dsh_session_summary(self, session: SessionLog) -> JsonLike:
        raise RuntimeError("broken summary")


@pytest.fixture
def backend() -> MemoryBackend:
    return MemoryBackend()


@pytest.fixture
def model() -> GatedModel:
    return GatedModel()


@pytest.fixture
async def host(backend: MemoryBackend, model: GatedModel) -> AsyncIterator[Host]:
    async with Host(backend=backend, model=model, clock=FakeClock(), cwd="/work") as running:
        yield running


async def turn(host: Host, session_id: str, text: str) -> None:
    agent, _ = await host.resume(session_id)
    agent.submit(text)
    with anyio.fail_after(WAIT):
        while agent.pending or agent.phase != "idle":
            await agent.when_idle()


async def stored_types(backend: MemoryBackend, session_id: str) -> list[str]:
    stored = await backend.inspect(session_id)
    assert stored is not None
    return [event.type for event in stored.events]


# -- titles ---------------------------------------------------------------------


async def test_a_live_sessions_title_is_a_stored_session_title_event(
    host: Host, backend: MemoryBackend
) -> None:
    agent = await host.create_session()

    summary = await host.sessions.set_title(agent.session.id, "Groceries")

    assert summary.to_dict()["title"] == "Groceries" and summary.live
    assert await stored_types(backend, agent.session.id) == ["session/title"]
    assert agent.session.events[-1].data == {"title": "Groceries"}


async def test_a_cold_sessions_title_is_appended_without_making_it_live(
    host: Host, backend: MemoryBackend
) -> None:
    agent = await host.create_session()
    session_id = agent.session.id
    await turn(host, session_id, "hello")
    await host.close_session(session_id)
    published: list[str] = []

    class Watch:
        @hookimpl
        def dsh_agent_published(self, agent: Any) -> None:
            published.append(agent.session.id)

    host.pm.register(Watch(), name="watch")

    summary = await host.sessions.set_title(session_id, "Renamed while cold")

    assert host.agent(session_id) is None and published == []
    assert summary.live is False and summary.length == 4
    assert summary.to_dict()["title"] == "Renamed while cold"
    types = await stored_types(backend, session_id)
    assert types == ["message/user", "message/assistant", "turn/end", "session/title"]
    assert [row.to_dict()["title"] for row in await host.catalogue.list()] == ["Renamed while cold"]
    resumed, _ = await host.resume(session_id)  # the title is part of its log from now on
    assert resumed.session.events[3].data == {"title": "Renamed while cold"}


async def test_a_rename_and_a_resume_of_one_cold_session_do_not_overlap(
    host: Host, backend: MemoryBackend
) -> None:
    session_id = (await host.create_session()).session.id
    await turn(host, session_id, "hello")
    await host.close_session(session_id)

    async with anyio.create_task_group() as group:
        group.start_soon(host.sessions.set_title, session_id, "One")
        group.start_soon(host.resume, session_id)
        group.start_soon(host.sessions.set_title, session_id, "Two")

    stored = await backend.inspect(session_id)
    assert stored is not None
    assert [event.seq for event in stored.events] == list(range(len(stored.events)))
    assert sorted(
        event.data["title"] for event in stored.events if event.type == "session/title"
    ) == [  # type: ignore[index]
        "One",
        "Two",
    ]
    assert [event.type for event in stored.events].count(END_SEED) == 1


async def test_a_title_is_refused_when_it_is_not_one_valid_title(host: Host) -> None:
    session_id = (await host.create_session()).session.id
    for bad in ("", " padded ", "x" * 201):
        with pytest.raises(ValidationError):
            await host.sessions.set_title(session_id, bad)
    with pytest.raises(SessionNotFound):
        await host.sessions.set_title("missing", "A title")
    with pytest.raises(InvalidSessionId):
        await host.sessions.set_title("../x", "A title")


async def test_a_title_storage_does_not_acknowledge_is_an_error(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await host.create_session()

    async def never_durable(session: Session) -> bool:
        return False

    monkeypatch.setattr(host.live, "flush", never_durable)
    with pytest.raises(PersistenceUnavailable, match="title"):
        await host.sessions.set_title(agent.session.id, "Lost?")


async def test_a_cold_title_that_storage_refuses_raises_and_frees_the_session() -> None:
    faulty = FaultyBackend(MemoryBackend())
    async with Host(backend=faulty, model=GatedModel(), clock=FakeClock()) as host:
        session_id = (await host.create_session()).session.id
        await host.close_session(session_id)
        faulty.fail("append", times=1)
        with pytest.raises(Exception, match="append"):
            await host.sessions.set_title(session_id, "Refused")
        summary = await host.sessions.set_title(session_id, "Accepted")  # nothing stayed held
        assert summary.to_dict()["title"] == "Accepted"


# -- deleting ---------------------------------------------------------------------


async def test_deleting_a_live_session_closes_it_then_trashes_its_log(
    host: Host, backend: MemoryBackend
) -> None:
    agent = await host.create_session()
    session_id = agent.session.id
    await turn(host, session_id, "hello")

    await host.sessions.delete(session_id)

    assert agent.closed and host.agent(session_id) is None
    assert await backend.inspect(session_id) is None
    assert await host.catalogue.list() == []
    await backend.restore(session_id)
    assert await stored_types(backend, session_id) == [
        "message/user",
        "message/assistant",
        "turn/end",
    ]


async def test_restore_brings_a_deleted_session_back_cold_and_the_list_watchers_hear_each_change(
    host: Host, backend: MemoryBackend, caplog: pytest.LogCaptureFixture
) -> None:
    heard: list[str] = []

    def broken() -> None:
        raise RuntimeError("a broken list watcher")

    host.sessions.watch_list(broken)  # logged, and the others still hear
    stop = host.sessions.watch_list(lambda: heard.append("changed"))
    session_id = (await host.create_session()).session.id
    await turn(host, session_id, "hello")
    await host.sessions.delete(session_id)
    assert heard == ["changed", "changed"]
    assert "a broken list watcher" in caplog.text

    summary = await host.sessions.restore(session_id)

    assert (summary.id, summary.live, summary.length) == (session_id, False, 3)
    assert host.agent(session_id) is None
    assert [row.id for row in await host.catalogue.list()] == [session_id]
    assert heard == ["changed"] * 3
    with pytest.raises(SessionNotFound, match="the trash holds no session"):
        await host.sessions.restore(session_id)
    await host.sessions.delete(session_id)
    stored = await backend.inspect_trashed(session_id)
    assert stored is not None
    await backend.initialize(stored.header, list(stored.events))
    with pytest.raises(SessionExists, match="is already stored"):
        await host.sessions.restore(session_id)
    stop()
    await host.sessions.fork(session_id)
    assert heard == ["changed"] * 4, (
        "a failed restore says nothing; a disposed watcher hears nothing"
    )


async def test_deleting_a_cold_session_trashes_it_and_an_unknown_one_is_not_found(
    host: Host, backend: MemoryBackend
) -> None:
    session_id = (await host.create_session()).session.id
    await turn(host, session_id, "hello")
    await host.close_session(session_id)

    await host.sessions.delete(session_id)

    assert await backend.inspect(session_id) is None
    with pytest.raises(SessionNotFound):
        await host.sessions.delete(session_id)
    with pytest.raises(SessionNotFound):
        await host.catalogue.tail(session_id)


async def test_deleting_when_the_trash_holds_the_id_already_keeps_the_session(
    host: Host, backend: MemoryBackend
) -> None:
    session_id = (await host.create_session()).session.id
    await turn(host, session_id, "hello")
    await host.sessions.delete(session_id)
    await backend.restore(session_id)
    backend._trash[session_id] = backend._logs[session_id]  # a stale copy left in the trash

    with pytest.raises(SessionExists):
        await host.sessions.delete(session_id)
    assert await host.catalogue.tail(session_id) == 3


class GatedBackend(MemoryBackend):
    """A `MemoryBackend` whose `append` or `trash` waits for `gates[name]` while it is
    there (a slow disk); `waiting` counts the calls that waited."""

    def __init__(self) -> None:
        super().__init__()
        self.gates: dict[str, anyio.Event] = {}
        self.waiting: Counter[str] = Counter()

    async def _pass(self, name: str) -> None:
        gate = self.gates.get(name)
        if gate is not None:
            self.waiting[name] += 1
            await gate.wait()

    async def append(self, session_id: str, events: Any) -> None:
        await self._pass("append")
        await super().append(session_id, events)

    async def trash(self, session_id: str) -> None:
        await self._pass("trash")
        await super().trash(session_id)


@pytest.mark.parametrize(
    ("slow", "forked"),
    [
        # The fork arrives while the delete's close stores the parent's last events:
        # it waits for the close, copies the stored parent, then the delete trashes it.
        ("append", True),
        # The fork arrives while the delete moves the parent to the trash: not found.
        ("trash", False),
    ],
)
async def test_a_fork_racing_a_delete_is_a_whole_child_or_not_found(
    slow: str, forked: bool
) -> None:
    # Issue 35: the delete's close detaches persistence before its last flush, so a
    # fork meanwhile found the parent live and its flush unacknowledged: 503.
    backend = GatedBackend()
    async with Host(backend=backend, model=GatedModel(), clock=FakeClock()) as host:
        parent = await host.create_session()
        parent_id = parent.session.id
        gate = backend.gates[slow] = anyio.Event()
        host.live.append(parent.session, "test/plain", {})  # the close has this to store
        outcome: list[object] = []

        async def fork() -> None:
            try:
                outcome.append((await host.sessions.fork(parent_id)).session.id)
            except Exception as error:
                outcome.append(error)

        async with anyio.create_task_group() as group:
            group.start_soon(host.sessions.delete, parent_id)
            await until(lambda: backend.waiting[slow], f"the delete's {slow} to wait")
            group.start_soon(fork)
            try:
                await until(
                    lambda: outcome or host.liveness.lock.waiting(parent_id), "the fork to wait"
                )
            finally:
                del backend.gates[slow]
                gate.set()

        assert await backend.inspect(parent_id) is None  # deleted either way
        children = [row.id for row in await host.catalogue.list() if row.lineage is not None]
        stored = [row.id for row in await backend.list() if row.lineage is not None]
        if forked:
            assert children == stored == outcome
        else:
            assert [type(error) for error in outcome] == [SessionNotFound]
            assert children == stored == []


async def test_deleting_a_session_whose_creation_failed_is_not_found() -> None:
    faulty = FaultyBackend(MemoryBackend())
    async with Host(backend=faulty, model=GatedModel(), clock=FakeClock()) as host:
        faulty.fail("trash", times=None)  # the failed creation stays stored, hidden
        faulty.fail("initialize", times=1, after_write=True)
        with pytest.raises(Exception, match="initialize"):
            await host.create_session()
        (hidden,) = [summary.id for summary in await faulty.list()]
        with pytest.raises(SessionNotFound):
            await host.sessions.delete(hidden)


# -- stopping a turn ------------------------------------------------------------------


async def test_cancel_turn_stops_the_running_turn_of_a_live_session(
    host: Host, model: GatedModel
) -> None:
    agent = await host.create_session()
    model.gate = anyio.Event()
    agent.submit("think slowly")
    with anyio.fail_after(WAIT):
        await model.entered.wait()

    assert await host.sessions.cancel_turn(agent.session.id) is True

    end = agent.session.events[-1]
    assert end.type == "turn/end" and end.data["error"]["code"] == "cancelled"  # type: ignore[index]
    assert await host.sessions.cancel_turn(agent.session.id) is False


async def test_cancel_turn_of_a_cold_session_is_false_and_keeps_it_cold(host: Host) -> None:
    session_id = (await host.create_session()).session.id
    await turn(host, session_id, "hello")
    await host.close_session(session_id)

    assert await host.sessions.cancel_turn(session_id) is False
    assert host.agent(session_id) is None
    with pytest.raises(SessionNotFound):
        await host.sessions.cancel_turn("missing")


# -- empty Sessions ---------------------------------------------------------------------


async def test_with_cleaning_an_unused_session_goes_to_the_trash_when_it_goes_cold(
    tmp_path: Path,
) -> None:
    backend = JsonlBackend(tmp_path / "data")
    async with Host(
        backend=backend, model=GatedModel(), clock=FakeClock(), clean_empty_sessions=True
    ) as host:
        unused = (await host.create_session()).session.id
        used = (await host.create_session()).session.id
        await turn(host, used, "hello")
        renamed = (await host.create_session()).session.id
        await host.sessions.set_title(renamed, "Named, never used")
        # A session/end-seed, nothing else:
        seed_only = (await host.sessions.fork(used, 0)).session.id
        await host.close_session(unused)
        assert await backend.inspect(unused) is None
    # Closing the host closed the others: only the used and the renamed ones stay.
    listed = {summary.id for summary in await backend.list()}
    assert listed == {used, renamed}
    assert {path.stem for path in (tmp_path / "data" / "trash").iterdir()} == {
        unused,
        seed_only,
    }
    await backend.aclose()


async def test_without_cleaning_an_unused_session_stays(host: Host, backend: MemoryBackend) -> None:
    session_id = (await host.create_session()).session.id
    await host.close_session(session_id)
    assert await backend.cursor(session_id) == 0


async def test_an_empty_session_that_cannot_be_trashed_stays_listed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    faulty = FaultyBackend(MemoryBackend())
    async with Host(
        backend=faulty, model=GatedModel(), clock=FakeClock(), clean_empty_sessions=True
    ) as host:
        session_id = (await host.create_session()).session.id
        faulty.fail("trash", times=1)
        await host.close_session(session_id)
        assert [row.id for row in await host.catalogue.list()] == [session_id]
    assert "is empty but stays listed" in caplog.text


# -- the list ---------------------------------------------------------------------------


async def test_the_list_title_is_the_set_one_else_the_first_line_of_the_first_message(
    host: Host,
) -> None:
    first = (await host.create_session()).session.id
    await turn(host, first, "Plan the trip to Lisbon\nwith trains only")
    second = (await host.create_session()).session.id
    await turn(host, second, "an ordinary message")
    await host.sessions.set_title(second, "Taxes 2026")
    third = (await host.create_session()).session.id

    titles = {row.id: row.to_dict()["title"] for row in await host.catalogue.list()}
    await host.close_session(first)
    cold = {row.id: row.to_dict()["title"] for row in await host.catalogue.list()}

    assert titles == {first: "Plan the trip to Lisbon", second: "Taxes 2026", third: None}
    assert cold == titles


async def test_a_search_matches_titles_first_messages_and_id_starts_case_insensitively(
    host: Host,
) -> None:
    trip = (await host.create_session()).session.id
    await turn(host, trip, "Plan the TRIP to Lisbon")
    taxes = (await host.create_session()).session.id
    await host.sessions.set_title(taxes, "Taxes 2026")
    await host.close_session(trip)

    async def found(query: str) -> list[str]:
        return [row.id for row in await host.catalogue.list(query)]

    assert await found("lisbon") == [trip]
    assert await found("TAXES") == [taxes]
    assert await found(taxes[:6]) == [taxes]
    assert await found("nothing like it") == []
    assert sorted(await found("   ")) == sorted([trip, taxes])


async def test_live_summaries_carry_each_plugins_compact_summary_computed_once_per_length(
    host: Host,
) -> None:
    counting = Counting()
    host.pm.register(counting, name="counting")
    host.pm.register(BrokenSummary(), name="broken")
    session_id = (await host.create_session()).session.id
    assert host.catalogue.summary(host.live.get(session_id)).to_dict()["plugins"] == {}
    await turn(host, session_id, "hello")
    assert await host.live.flush(host.live.get(session_id))

    rows = [row.to_dict() for row in await host.catalogue.list()]
    again = [row.to_dict() for row in await host.catalogue.list()]
    calls = counting.calls
    await host.close_session(session_id)
    cold = [row.to_dict() for row in await host.catalogue.list()]

    assert rows[0]["plugins"] == {"counting": {"messages": 1}}
    assert again == rows and calls == 2  # the first (empty) summary, then one for length 3
    assert cold[0]["plugins"] is None


async def test_a_plugin_registered_later_gets_its_summary_into_the_list(host: Host) -> None:
    session_id = (await host.create_session()).session.id
    await turn(host, session_id, "hello")
    assert await host.live.flush(host.live.get(session_id))
    before = [row.to_dict()["plugins"] for row in await host.catalogue.list()]

    host.pm.register(Counting(), name="counting")
    after = [row.to_dict()["plugins"] for row in await host.catalogue.list()]

    assert (before, after) == ([{}], [{"counting": {"messages": 1}}])
