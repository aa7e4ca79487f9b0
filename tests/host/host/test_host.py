"""The Host: Session lifecycles, publication, storage reads and plugin contributions."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh import ActionError, Agent, ClientModule, Session, SessionEvent, SessionLog, hookimpl
from dsh.host.errors import HostClosed, PersistenceUnavailable
from dsh.host.host import Host
from dsh.models.base import ModelReply, ModelRequest
from dsh.persistence.errors import SessionNotFound
from dsh.persistence.memory import MemoryBackend
from dsh.plugins.loader import PluginSpec
from dsh.session.errors import FlushError, InvalidSessionId
from dsh.session.types import END_SEED
from dsh.testing import FakeClock
from dsh.testing.faults import FaultyBackend
from tests.host.fixtures.distributions import FakeSite
from tests.host.fixtures.plugins import StartsATask
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio


class EchoModel:
    name = "echo"

    async def complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
    ) -> ModelReply:
        return ModelReply(text=f"echo: {request.messages[-1].text}")


class Recorder:
    """A test plugin that records publications and contributes views and modules."""

    def __init__(self) -> None:
        self.published: list[Agent] = []

    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> None:
        self.published.append(agent)

    @hookimpl
    def dsh_event_view(self, session: Session, event: SessionEvent) -> dict[str, Any] | None:
        if event.type == "message/user":
            return {"marked": event.seq}
        return None

    @hookimpl
    def dsh_client_modules(self) -> list[ClientModule]:
        return [ClientModule(path=Path(__file__), event_types=("message/user",))]


class Broken:
    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> None:
        raise RuntimeError("broken plugin")

    @hookimpl
    def dsh_event_view(self, session: Session, event: SessionEvent) -> dict[str, Any] | None:
        raise RuntimeError("broken view")

    @hookimpl
    def dsh_client_modules(self) -> list[object]:
        raise RuntimeError("broken modules")


class WrongTypes:
    @hookimpl
    def dsh_client_modules(self) -> list[object]:
        return ["not a module"]


@pytest.fixture
def backend() -> MemoryBackend:
    return MemoryBackend()


@pytest.fixture
async def host(backend: MemoryBackend) -> AsyncIterator[Host]:
    async with Host(backend=backend, model=EchoModel(), clock=FakeClock(), cwd="/work") as host:
        yield host


@pytest.fixture
def recorder(host: Host) -> Recorder:
    plugin = Recorder()
    host.pm.register(plugin, name="recorder")
    return plugin


async def settled(agent: Agent) -> None:
    with anyio.fail_after(WAIT):
        while agent.pending or agent.phase != "idle":
            await agent.when_idle()


async def test_a_new_session_is_stored_before_its_agent_is_published(
    host: Host, backend: MemoryBackend, recorder: Recorder
) -> None:
    agent = await host.create_session()

    stored = await backend.inspect(agent.session.id)
    assert stored is not None
    assert stored.header.identity_equals(agent.session.header)
    assert recorder.published == [agent]
    assert agent.is_root
    assert host.agent(agent.session.id) is agent
    assert agent.session.header.cwd == "/work"


async def test_a_session_whose_storage_refuses_is_not_made_live() -> None:
    faulty = FaultyBackend(MemoryBackend())
    faulty.fail("initialize", times=None)
    async with Host(backend=faulty, model=EchoModel(), clock=FakeClock()) as host:
        with pytest.raises(FlushError):
            await host.create_session()
        assert host.agents() == []
        assert list(host.live.live()) == []


async def test_a_store_without_durable_acknowledgement_raises_persistence_unavailable(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def never_durable(session: Session) -> bool:
        return False

    monkeypatch.setattr(host.live, "flush", never_durable)
    with pytest.raises(PersistenceUnavailable, match="did not acknowledge"):
        await host.create_session()
    assert host.agents() == []


async def test_a_turn_runs_and_closing_makes_the_session_cold(
    host: Host, backend: MemoryBackend
) -> None:
    agent = await host.create_session()
    agent.submit("hello")
    await settled(agent)

    await host.close_session(agent.session.id)

    assert host.agent(agent.session.id) is None
    assert agent.closed
    stored = await host.catalogue.read(agent.session.id)
    assert [event.type for event in stored.events] == [
        "message/user",
        "message/assistant",
        "turn/end",
    ]
    await host.close_session(agent.session.id)  # closing a cold Session is harmless


async def test_resume_builds_a_new_live_object_with_an_end_seed_and_publishes_it(
    host: Host, recorder: Recorder
) -> None:
    first = await host.create_session()
    first.submit("hello")
    await settled(first)
    session_id = first.session.id
    await host.close_session(session_id)

    resumed, did_resume = await host.resume(session_id)

    assert did_resume
    assert resumed.session is not first.session
    assert [event.type for event in resumed.session.events][-1] == END_SEED
    assert len(resumed.session) == 4
    assert recorder.published == [first, resumed]
    stored = await host.catalogue.read(session_id)
    assert len(stored.events) == 4


async def test_resuming_a_live_session_is_a_no_op(host: Host, recorder: Recorder) -> None:
    agent = await host.create_session()

    again, did_resume = await host.resume(agent.session.id)

    assert again is agent
    assert not did_resume
    assert recorder.published == [agent]


async def test_a_resume_reads_its_log_once_and_proves_it_by_construction(
    backend: MemoryBackend,
) -> None:
    faulty = FaultyBackend(backend)
    async with Host(backend=faulty, model=EchoModel(), clock=FakeClock()) as host:
        session_id = (await host.create_session()).session.id
        await host.close_session(session_id)
        faulty.calls.clear()
        resumed, _ = await host.resume(session_id)
        asked = {name: faulty.calls[name] for name in ("mark", "inspect", "initialize", "read")}
        assert asked == {"mark": 0, "inspect": 1, "initialize": 0, "read": 0}
        assert host.coordinator.durable_length(resumed.session) == len(resumed.session)
        stored = await backend.inspect(session_id)
        assert stored is not None
        assert [e.to_json() for e in stored.events] == [e.to_json() for e in resumed.session.events]


class UnmarkedReads(MemoryBackend):
    """A backend whose reads cannot say where the log stood (`StoredSession.mark`)."""

    async def inspect(self, session_id: str) -> Any:
        stored = await super().inspect(session_id)
        return None if stored is None else dataclasses.replace(stored, mark=None)


async def test_a_resume_read_without_its_mark_has_its_prefix_proven() -> None:
    faulty = FaultyBackend(UnmarkedReads())
    async with Host(backend=faulty, model=EchoModel(), clock=FakeClock()) as host:
        agent = await host.create_session()
        agent.submit("hello")
        while agent.pending or agent.phase != "idle":
            await agent.when_idle()
        session_id = agent.session.id
        await host.close_session(session_id)
        faulty.calls.clear()
        resumed, _ = await host.resume(session_id)
        # Storage said it exists; persistence read it back and compared it all.
        assert (faulty.calls["initialize"], faulty.calls["inspect"]) == (1, 2)
        assert [event.type for event in resumed.session.events][-1] == END_SEED
        stored = await faulty.inner.inspect(session_id)
        assert stored is not None and len(stored.events) == len(resumed.session)


async def test_resume_of_an_unknown_or_invalid_id_fails_before_storage(host: Host) -> None:
    with pytest.raises(SessionNotFound):
        await host.resume("missing")
    with pytest.raises(InvalidSessionId):
        await host.resume("../etc/passwd")


async def test_fork_of_a_live_session_copies_the_prefix_and_marks_the_seed(
    host: Host, recorder: Recorder
) -> None:
    parent = await host.create_session()
    parent.submit("hello")
    await settled(parent)

    child = await host.sessions.fork(parent.session.id, at_seq=2)

    header = child.session.header
    assert header.seed_length == 3
    assert header.lineage is not None
    assert header.lineage.parent_id == parent.session.id
    assert header.lineage.forked_at == 2
    assert header.origin.kind == "fork"
    assert list(child.session.events)[:2] == list(parent.session.events)[:2]
    assert child.session.events[2].type == END_SEED
    assert recorder.published == [parent, child]
    stored = await host.catalogue.read(child.session.id)
    assert len(stored.events) == 3


async def test_fork_of_a_cold_session_reads_storage_and_defaults_to_the_whole_log(
    host: Host,
) -> None:
    parent = await host.create_session()
    parent.submit("hello")
    await settled(parent)
    await host.close_session(parent.session.id)

    child = await host.sessions.fork(parent.session.id)

    assert child.session.header.seed_length == 4
    assert host.agent(parent.session.id) is None


async def test_fork_out_of_range_is_a_clear_error(host: Host) -> None:
    parent = await host.create_session()
    with pytest.raises(ValueError, match="out of range"):
        await host.sessions.fork(parent.session.id, at_seq=5)


async def test_a_child_agent_is_one_level_deeper_and_published(
    host: Host, recorder: Recorder
) -> None:
    root = await host.create_session()

    child = await host.sessions.spawn_child(root)

    assert child.parent is root
    assert not child.is_root
    assert child.session.header.depth == 1
    assert recorder.published == [root, child]


async def test_reading_a_cold_session_never_publishes(host: Host, recorder: Recorder) -> None:
    agent = await host.create_session()
    await host.close_session(agent.session.id)
    recorder.published.clear()

    stored = await host.catalogue.read(agent.session.id)

    assert stored.header.id == agent.session.id
    assert recorder.published == []
    assert host.agent(agent.session.id) is None


async def test_sessions_are_listed_newest_first_with_live_flags(host: Host) -> None:
    clock = host.clock
    assert isinstance(clock, FakeClock)
    older = await host.create_session()
    clock.advance(1)
    newer = await host.create_session()
    await host.close_session(older.session.id)

    rows = await host.catalogue.list()

    assert [row.id for row in rows] == [newer.session.id, older.session.id]
    assert [row.live for row in rows] == [True, False]
    assert rows[0].to_dict()["lineage"] is None
    assert host.catalogue.summary(newer.session).live


async def test_a_failing_plugin_does_not_keep_others_from_seeing_an_agent(
    host: Host, recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    host.pm.register(Broken(), name="broken")

    agent = await host.create_session()

    assert recorder.published == [agent]
    assert "plugin broken failed in dsh_agent_published" in caplog.text


async def test_event_views_come_from_plugins_and_failures_are_contained(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    host.pm.register(Recorder(), name="recorder")
    agent = await host.create_session()
    agent.submit("hi")
    await settled(agent)
    user_event = agent.session.events[0]

    assert host.contributions.view(agent.session, user_event) == {"marked": 0}
    assert host.contributions.view(agent.session, agent.session.events[1]) is None

    host.pm.register(Broken(), name="broken")  # called first: registered last
    assert host.contributions.view(agent.session, user_event) == {"marked": 0}
    assert "plugin broken failed in dsh_event_view" in caplog.text


async def test_a_view_that_is_not_a_dict_is_ignored(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    class ListView:
        @hookimpl
        def dsh_event_view(self, session: Session, event: SessionEvent) -> object:
            return ["not", "a", "dict"]

    host.pm.register(ListView(), name="list-view")
    agent = await host.create_session()
    agent.submit("hi")
    await settled(agent)

    assert host.contributions.view(agent.session, agent.session.events[0]) is None
    assert "plugin list-view returned a bad result from dsh_event_view" in caplog.text
    assert "expected a JSON object, got list" in caplog.text


async def test_client_modules_are_collected_per_plugin_and_bad_ones_skipped(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    host.pm.register(Recorder(), name="recorder")
    host.pm.register(Broken(), name="broken")
    host.pm.register(WrongTypes(), name="wrong")

    modules = host.contributions.client_modules()

    assert [(item.plugin, item.module.event_types) for item in modules] == [
        ("recorder", ("message/user",))
    ]
    assert "plugin broken failed in dsh_client_modules" in caplog.text
    assert "expected ClientModule" in caplog.text


async def test_closing_the_host_closes_agents_and_refuses_more_work(
    backend: MemoryBackend,
) -> None:
    host = Host(backend=backend, model=EchoModel(), clock=FakeClock())
    async with host:
        agent = await host.create_session()
        agent.submit("hello")
        await settled(agent)
    assert agent.closed
    assert host.agents() == []
    with pytest.raises(HostClosed):
        await host.create_session()
    with pytest.raises(HostClosed):
        _ = host.loader
    stored = await backend.inspect(agent.session.id)
    assert stored is not None
    assert [event.type for event in stored.events][-1] == "turn/end"
    await host.aclose()  # closing twice is harmless


async def test_a_missing_plugin_in_the_overlay_stops_the_host_from_starting(
    backend: MemoryBackend,
) -> None:
    spec = PluginSpec(name="not-installed-anywhere", config={}, distribution=None, source=None)
    host = Host(backend=backend, model=EchoModel(), plugins=[spec])
    with pytest.raises(Exception, match="not-installed-anywhere"):
        async with host:
            pass
    with pytest.raises(HostClosed):
        _ = host.coordinator


async def test_closing_the_host_closes_a_model_that_can_be_closed(backend: MemoryBackend) -> None:
    class ClosableModel(EchoModel):
        closed = 0

        async def aclose(self) -> None:
            self.closed += 1

    model = ClosableModel()
    async with Host(backend=backend, model=model, clock=FakeClock()):
        assert model.closed == 0
    assert model.closed == 1


async def test_concurrent_resumes_of_one_cold_session_make_it_live_once(
    host: Host, recorder: Recorder
) -> None:
    agent = await host.create_session()
    session_id = agent.session.id
    await host.close_session(session_id)
    recorder.published.clear()
    results: list[tuple[Agent, bool]] = []

    async def resume() -> None:
        results.append(await host.resume(session_id))

    async with anyio.create_task_group() as group:
        for _ in range(3):
            group.start_soon(resume)

    agents = {id(agent) for agent, _ in results}
    assert len(agents) == 1
    assert sorted(resumed for _, resumed in results) == [False, False, True]
    assert len(recorder.published) == 1


async def test_a_failed_resume_lets_a_waiting_resume_try_again(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await host.create_session()
    session_id = agent.session.id
    await host.close_session(session_id)
    original = host.catalogue.read
    calls = 0

    async def flaky(requested: str) -> Any:
        nonlocal calls
        calls += 1
        await anyio.lowlevel.checkpoint()
        if calls == 1:
            raise OSError("transient")
        return await original(requested)

    monkeypatch.setattr(host.catalogue, "read", flaky)
    outcomes: list[object] = []

    async def resume() -> None:
        try:
            outcomes.append((await host.resume(session_id))[1])
        except OSError as error:
            outcomes.append(str(error))

    async with anyio.create_task_group() as group:
        group.start_soon(resume)
        group.start_soon(resume)

    assert sorted(map(str, outcomes)) == ["True", "transient"]
    assert host.agent(session_id) is not None


async def test_a_live_parent_is_stored_before_it_is_forked(
    host: Host, backend: MemoryBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = await host.create_session()
    host.live.append(parent.session, "test/unstored", {})

    child = await host.sessions.fork(parent.session.id)

    stored = await backend.inspect(parent.session.id)
    assert stored is not None
    assert [event.type for event in stored.events] == ["test/unstored"]
    assert child.session.events[0].type == "test/unstored"

    async def refuse(session: Session) -> bool:
        return False

    monkeypatch.setattr(host.live, "flush", refuse)
    with pytest.raises(PersistenceUnavailable, match="cannot be forked"):
        await host.sessions.fork(parent.session.id)


# -- no phantoms, honest retries (second edition) -------------------------------------


@pytest.mark.parametrize("operation", ["initialize", "mark"])
async def test_a_create_answered_with_an_error_leaves_no_session_listed(operation: str) -> None:
    faulty = FaultyBackend(MemoryBackend())
    # The creation lands, then its acknowledgement (or the read right after it) fails.
    faulty.fail(operation, after_write=True, times=None)
    async with Host(backend=faulty, model=EchoModel(), clock=FakeClock()) as host:
        with pytest.raises(FlushError):
            await host.create_session()
        assert await host.catalogue.list() == []
        assert host.agents() == []
    trashed = faulty.inner._trash  # type: ignore[attr-defined]
    assert len(trashed) == 1  # kept in the trash, never destroyed


async def test_a_fork_answered_with_an_error_leaves_no_child_listed(host: Host) -> None:
    parent = await host.create_session()
    backend = host.backend
    assert isinstance(backend, MemoryBackend)
    faulty = FaultyBackend(backend)
    faulty.fail("mark", after_write=True, times=None)
    host.catalogue.reader = type(host.catalogue.reader)(  # the same Host, its writes now failing
        host.live, faulty, durable=lambda s: 0, view=host.contributions.view
    )
    host.backend = faulty
    assert host._coordinator is not None
    host._coordinator.backend = faulty
    with pytest.raises(FlushError):
        await host.sessions.fork(parent.session.id)
    faulty.clear()
    assert [row.id for row in await host.catalogue.list()] == [parent.session.id]


async def test_a_failed_creation_that_cannot_be_trashed_is_still_not_listed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    faulty = FaultyBackend(MemoryBackend())
    faulty.fail("mark", after_write=True, times=None)
    faulty.fail("trash", times=None)
    async with Host(backend=faulty, model=EchoModel(), clock=FakeClock()) as host:
        with pytest.raises(FlushError):
            await host.create_session()
        assert await host.catalogue.list() == []
        [stored] = await faulty.inner.list()
        with pytest.raises(SessionNotFound):
            await host.catalogue.tail(stored.id)
        with pytest.raises(SessionNotFound):
            await host.resume(stored.id)
    assert "its failed creation stays stored" in caplog.text


async def test_a_resume_retried_after_a_failure_writes_one_end_seed(backend: MemoryBackend) -> None:
    faulty = FaultyBackend(backend)
    async with Host(backend=faulty, model=EchoModel(), clock=FakeClock()) as host:
        agent = await host.create_session()
        session_id = agent.session.id
        await host.close_session(session_id)
        # The marker's append lands, then its acknowledgement is lost.
        faulty.fail("append", after_write=True, times=None)
        with pytest.raises(FlushError):
            await host.resume(session_id)
        assert [event.type for event in await backend.read(session_id)] == [END_SEED]
        faulty.clear()
        resumed, made_live = await host.resume(session_id)
        assert made_live
        assert [event.type for event in resumed.session.events] == [END_SEED]
        await host.close_session(session_id)
        again, _ = await host.resume(session_id)  # an ordinary resume marks its lifecycle
        assert [event.type for event in again.session.events] == [END_SEED, END_SEED]


async def test_storage_health_lists_the_sessions_whose_writes_fail(
    backend: MemoryBackend,
) -> None:
    faulty = FaultyBackend(backend)
    clock = FakeClock()
    async with Host(backend=faulty, model=EchoModel(), clock=clock) as host:
        agent = await host.create_session()
        assert host.catalogue.health().ok
        faulty.fail("append", times=None)
        host.live.append(agent.session, "test/a", {})
        host.live.append(agent.session, "test/b", {})
        with anyio.fail_after(WAIT):
            while host.catalogue.health().ok:
                await anyio.lowlevel.checkpoint()
        health = host.catalogue.health()
        assert [item.session_id for item in health.degraded] == [agent.session.id]
        assert health.unconfirmed_events == 2
        faulty.clear()
        assert await host.live.flush(agent.session)
        assert host.catalogue.health().ok


async def test_closing_the_host_names_the_sessions_it_could_not_store(
    backend: MemoryBackend,
) -> None:
    faulty = FaultyBackend(backend)
    clock = FakeClock()
    host = Host(backend=faulty, model=EchoModel(), clock=clock, close_retry_seconds=1.0)

    async def advance() -> None:
        while True:  # whoever waits to retry, let the fake time pass
            await anyio.lowlevel.checkpoint()
            if clock.sleeping:
                clock.advance(max(clock.sleeps))

    async with anyio.create_task_group() as group:
        async with host:
            stored = await host.create_session()
            unstored = await host.create_session()
            faulty.fail("append", times=None, session_id=unstored.session.id)
            host.live.append(unstored.session, "test/a", {})
            host.live.append(stored.session, "test/a", {})
            group.start_soon(advance)
        group.cancel_scope.cancel()
    assert host.unstored == [unstored.session.id]
    assert len(await backend.read(stored.session.id)) == 1
    assert await backend.read(unstored.session.id) == []


# -- start-up unwinds like closing ------------------------------------------------


async def test_a_plugin_failing_to_load_unwinds_the_host_and_cancels_earlier_work(
    backend: MemoryBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = FakeSite(tmp_path / "site", monkeypatch)
    site.plugin("starts-a-task", "StartsATask")
    site.plugin("fails", "FailsToStart")
    StartsATask.cancelled = []
    specs = [PluginSpec(name="starts-a-task"), PluginSpec(name="fails")]
    host = Host(backend=backend, model=EchoModel(), plugins=specs)

    with anyio.fail_after(WAIT), pytest.raises(Exception, match=r"'fails'.*failed to start"):
        async with host:
            raise AssertionError("unreachable: the host does not start")

    assert StartsATask.cancelled == ["starts-a-task"]
    with pytest.raises(HostClosed):
        _ = host.loader


# -- delegation depth is durable truth -------------------------------------------


async def test_a_resumed_child_session_stays_a_child(host: Host, recorder: Recorder) -> None:
    root = await host.create_session()
    child = await host.sessions.spawn_child(root)
    await host.close_session(child.session.id)

    resumed, _ = await host.resume(child.session.id)

    assert resumed.parent is None  # nothing in the log names a live parent
    assert not resumed.is_root
    assert resumed.depth == 1
    assert (await host.catalogue.read(child.session.id)).header.depth == 1


async def test_a_fork_keeps_its_parent_s_depth_live_or_cold(host: Host) -> None:
    root = await host.create_session()
    child = await host.sessions.spawn_child(root)
    grandchild = await host.sessions.spawn_child(child)

    fork_of_live = await host.sessions.fork(grandchild.session.id)
    await host.close_session(child.session.id)
    fork_of_cold = await host.sessions.fork(child.session.id)
    fork_of_root = await host.sessions.fork(root.session.id)

    assert (grandchild.depth, fork_of_live.depth, fork_of_cold.depth) == (2, 2, 1)
    assert not fork_of_live.is_root and not fork_of_cold.is_root
    assert fork_of_root.is_root and fork_of_root.depth == 0
    stored = await host.catalogue.read(fork_of_live.session.id)
    assert stored.header.delegation_depth == 2


# -- the second-edition hooks ------------------------------------------------------


class Stateful:
    """State, wake time and actions from a plugin, with the ways they can go wrong."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    @hookimpl
    def dsh_session_state(self, session: SessionLog) -> Any:
        self.seen.append(len(session))
        return {"length": len(session), "header": session.header.id}

    @hookimpl
    def dsh_session_wake_at(self, session: SessionLog) -> int | None:
        return 5_000 + len(session)

    @hookimpl
    def dsh_session_action(self, agent: Agent, name: str, args: dict[str, Any]) -> Any:
        if name == "echo":
            return self._echo(args)
        if name == "refuse":
            raise ActionError.conflict("already done")
        if name == "sync":
            return {"not": "awaitable"}
        if name == "crash":
            return self._crash()
        if name == "not-json":
            return self._not_json()
        return None

    async def _echo(self, args: dict[str, Any]) -> Any:
        await anyio.lowlevel.checkpoint()
        return {"echo": args, "tuple": (1, 2)}

    async def _crash(self) -> Any:
        raise RuntimeError("the plugin tripped")

    async def _not_json(self) -> Any:
        return {"when": float("nan")}


class BadStates:
    @hookimpl
    def dsh_session_state(self, session: SessionLog) -> Any:
        return {1, 2}

    @hookimpl
    def dsh_session_wake_at(self, session: SessionLog) -> Any:
        return True  # a bool is not a time

    @hookimpl
    def dsh_session_action(self, agent: Agent, name: str, args: dict[str, Any]) -> Any:
        raise RuntimeError("unreachable: never asked")


async def test_session_state_is_keyed_by_plugin_from_the_durable_prefix(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    stateful = Stateful()
    host.pm.register(stateful, name="stateful")
    host.pm.register(BadStates(), name="bad")
    agent = await host.create_session()
    host.live.append(agent.session, "test/plain", {})  # appended, not yet durable

    live = await host.plugin_states(agent.session.id)
    await host.live.flush(agent.session)
    flushed = await host.plugin_states(agent.session.id)
    await host.close_session(agent.session.id)
    cold = await host.plugin_states(agent.session.id)

    assert live == {"stateful": {"length": 0, "header": agent.session.id}}
    assert flushed == {"stateful": {"length": 1, "header": agent.session.id}}
    assert cold == flushed
    assert "plugin bad returned a bad result from dsh_session_state" in caplog.text
    with pytest.raises(SessionNotFound):
        await host.plugin_states("missing")


async def test_the_wake_time_is_the_earliest_integer_any_plugin_gives(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    class Earlier:
        @hookimpl
        def dsh_session_wake_at(self, session: SessionLog) -> int | None:
            return 1_000

    agent = await host.create_session()
    assert host.wake_at(agent.session) is None
    host.pm.register(Stateful(), name="stateful")
    host.pm.register(BadStates(), name="bad")
    assert await host.session_wake_at(agent.session.id) == 5_000
    host.pm.register(Earlier(), name="earlier")
    assert await host.session_wake_at(agent.session.id) == 1_000
    assert "expected epoch milliseconds (an int), got True" in caplog.text


async def test_an_action_reaches_only_the_named_plugin_and_answers_json(host: Host) -> None:
    host.pm.register(Stateful(), name="stateful")
    host.pm.register(BadStates(), name="bad")
    agent = await host.create_session()

    result = await host.actions.run(agent.session.id, "stateful", "echo", {"x": 1})

    assert result == {"echo": {"x": 1}, "tuple": [1, 2]}


@pytest.mark.parametrize(
    ("plugin", "action", "status", "code"),
    [
        ("stateful", "refuse", 409, "conflict"),
        ("stateful", "unknown", 404, "unknown_action"),
        ("recorder", "echo", 404, "unknown_action"),
        ("ghost", "echo", 404, "unknown_plugin"),
        ("stateful", "sync", 500, "internal_error"),
        ("stateful", "crash", 500, "internal_error"),
        ("stateful", "not-json", 500, "internal_error"),
    ],
)
async def test_an_action_that_cannot_run_says_why(
    host: Host,
    recorder: Recorder,
    caplog: pytest.LogCaptureFixture,
    plugin: str,
    action: str,
    status: int,
    code: str,
) -> None:
    host.pm.register(Stateful(), name="stateful")
    agent = await host.create_session()

    with pytest.raises(ActionError) as caught:
        await host.actions.run(agent.session.id, plugin, action, {})

    assert (caught.value.status, caught.value.code) == (status, code)
    if status == 500:
        assert f"action {action!r} of plugin 'stateful'" in caplog.text
        assert "see the server log" in caught.value.message


async def test_an_action_on_a_cold_session_resumes_it_and_an_unknown_one_is_not_found(
    host: Host, recorder: Recorder
) -> None:
    host.pm.register(Stateful(), name="stateful")
    agent = await host.create_session()
    await host.close_session(agent.session.id)

    assert await host.actions.run(agent.session.id, "stateful", "echo", {}) is not None
    assert host.agent(agent.session.id) is not None
    assert len(recorder.published) == 2
    with pytest.raises(SessionNotFound):
        await host.actions.run("missing", "stateful", "echo", {})


async def test_client_modules_are_computed_once_per_set_of_plugins(host: Host) -> None:
    class Counting:
        calls = 0

        @hookimpl
        def dsh_client_modules(self) -> list[ClientModule]:
            Counting.calls += 1
            return [ClientModule(path=Path(__file__))]

    host.pm.register(Counting(), name="counting")
    first = host.contributions.client_modules()
    again = host.contributions.client_modules()
    host.pm.register(Recorder(), name="recorder")
    grown = host.contributions.client_modules()

    assert Counting.calls == 2
    assert first == again
    assert [module.plugin for module in grown] == ["recorder", "counting"]


async def test_a_plugin_gone_while_its_session_resumes_is_not_found(host: Host) -> None:
    class LeavesOnPublication(Stateful):
        @hookimpl
        def dsh_agent_published(self, agent: Agent) -> None:
            host.pm.unregister(self)

    agent = await host.create_session()
    await host.close_session(agent.session.id)
    host.pm.register(LeavesOnPublication(), name="leaving")

    with pytest.raises(ActionError) as caught:
        await host.actions.run(agent.session.id, "leaving", "echo", {})

    assert (caught.value.status, caught.value.code) == (404, "unknown_plugin")


async def test_a_failure_while_unwinding_a_failed_start_is_noted_on_the_error(
    backend: MemoryBackend,
) -> None:
    class BrokenClose(EchoModel):
        async def aclose(self) -> None:
            raise OSError("cannot close the model")

    spec = PluginSpec(name="not-installed-anywhere")
    host = Host(backend=backend, model=BrokenClose(), plugins=[spec])

    with pytest.raises(Exception, match="not-installed-anywhere") as caught:
        async with host:
            raise AssertionError("unreachable: the host does not start")

    assert any("cannot close the model" in note for note in caught.value.__notes__)
