"""Actions through a host that does not own the Session (`postgres.remote_actions`,
`dsh.relay.actions`): run once, on the owner, answered by the host they were posted to."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest

from dsh import hookimpl
from dsh.agents.agent import Agent
from dsh.host.host import Host
from dsh.host.leases import LeaseSettings
from dsh.persistence.errors import SessionNotFound, StorageError
from dsh.persistence.postgres import PostgresBackend
from dsh.persistence.remote_actions import ActionAnswer
from dsh.plugins.errors import ActionError
from dsh.session.errors import SessionLiveElsewhere
from dsh.testing import FakeClock, FakeModel
from dsh.web.app import create_app
from dsh.web.settings import WebSettings
from tests.host.web.conftest import AUTH, TOKEN
from tests.support.deadlines import WAIT, until

from .test_backend import backend_for

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


class Actions:
    """A plugin whose actions say where they ran and leave a durable mark there."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.ran: list[str] = []
        self.release = anyio.Event()

    @hookimpl
    def dsh_session_action(self, agent: Agent, name: str, args: dict[str, Any]) -> Any:
        if name == "mark":
            return self._mark(agent, args)
        if name == "refuse":
            raise ActionError.conflict("already done")
        if name == "hang":
            return self._hang()
        return None

    async def _mark(self, agent: Agent, args: dict[str, Any]) -> Any:
        self.ran.append(agent.session.id)
        self.host.live.append(agent.session, "test/mark", {"args": args})
        assert await self.host.live.flush(agent.session)
        return {"ran_on": self.host.host_id, "args": args}

    async def _hang(self) -> Any:
        await self.release.wait()
        return "released"


@asynccontextmanager
async def two_hosts(url: str, clock: FakeClock) -> AsyncIterator[tuple[Host, Host]]:
    made = [
        Host(
            backend=backend_for(url),
            model=FakeModel(),
            clock=clock,
            lease_settings=LeaseSettings(ttl_seconds=30, renew_seconds=3),
        )
        for _ in range(2)
    ]
    try:
        async with made[0], made[1]:
            for host in made:
                host.pm.register(Actions(host), name="actions")
            yield made[0], made[1]
    finally:
        for host in made:
            await host.backend.aclose()


def plugin(host: Host) -> Actions:
    found = host.pm.get_plugin("actions")
    assert isinstance(found, Actions)
    return found


async def rows(host: Host) -> list[tuple[Any, ...]]:
    assert isinstance(host.backend, PostgresBackend)
    async with host.backend.database.connection() as connection:
        cursor = await connection.execute("SELECT id, taken_by, answer FROM remote_actions")
        return await cursor.fetchall()


async def ticking(clock: FakeClock, done: anyio.Event, step: float = 0.5) -> None:
    """Advance the fake clock (the relays' polls) until `done`."""
    while not done.is_set():
        await anyio.sleep(0.01)
        clock.advance(step)


async def ticking_until(clock: FakeClock, condition: Callable[[], object], what: str) -> None:
    """Advance the fake clock until `condition()` holds; fail after `WAIT` seconds naming `what`."""
    with anyio.fail_after(WAIT):
        while not condition():
            await anyio.sleep(0.01)
            clock.advance(0.5)


@dataclass
class Asked:
    """One action asked of a host in the background: its result or its refusal."""

    result: object = None
    error: ActionError | None = None
    done: anyio.Event = field(default_factory=anyio.Event)


@asynccontextmanager
async def asking(
    clock: FakeClock, host: Host, session_id: str, action: str, *, step: float = 0.5, **args: Any
) -> AsyncIterator[Asked]:
    """Ask `host` for `action` while the body runs, the clock ticking; return once answered."""
    asked = Asked()

    async def ask() -> None:
        try:
            asked.result = await host.actions.run(session_id, "actions", action, args)
        except ActionError as error:
            asked.error = error
        asked.done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(ask)
        group.start_soon(ticking, clock, asked.done, step)
        yield asked


async def stored_requests(host: Host, taken_by: list[str | None]) -> None:
    """Wait until the stored requests were taken by exactly these (None: untaken)."""
    for _ in range(200):
        if [row[1] for row in await rows(host)] == taken_by:
            return
        await anyio.sleep(0.01)
    assert [row[1] for row in await rows(host)] == taken_by


async def test_an_action_posted_on_a_non_owner_runs_once_on_the_owner_and_answers_there(
    pg_url: str,
) -> None:
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        agent = await a.create_session()
        session_id = agent.session.id
        result = await b.actions.run(session_id, "actions", "mark", {"n": 1})
        assert result == {"ran_on": a.host_id, "args": {"n": 1}}
        assert plugin(a).ran == [session_id] and plugin(b).ran == []
        assert b.agent(session_id) is None and a.owns(session_id)
        assert a.relays.actions is not None and a.relays.actions.ran == 1
        stored = await b.backend.read(session_id, types={"test/mark"})
        assert [event.data for event in stored] == [{"args": {"n": 1}}]
        assert await rows(a) == []  # the poster removed its request


async def test_the_owners_refusal_and_failure_reach_the_poster_with_their_codes(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        session_id = (await a.create_session()).session.id
        with pytest.raises(ActionError) as refused:
            await b.actions.run(session_id, "actions", "refuse", {})
        assert (refused.value.code, refused.value.status) == ("conflict", 409)
        assert refused.value.message == "already done"
        with pytest.raises(ActionError) as unknown:
            await b.actions.run(session_id, "actions", "nope", {})
        assert (unknown.value.code, unknown.value.status) == ("unknown_action", 404)

        async def broken(*args: object) -> object:
            raise RuntimeError("the owner tripped")

        real = a.actions.run
        a.actions.run = broken  # type: ignore[method-assign]
        with pytest.raises(ActionError) as failed:
            await b.actions.run(session_id, "actions", "mark", {})
        assert (failed.value.code, failed.value.status) == ("internal_error", 500)
        assert f"failed (RuntimeError) on host {a.host_id}; see its server log" in str(
            failed.value.message
        )

        async def gone(*args: object) -> object:
            raise SessionNotFound(f"session {session_id} is not stored")

        a.actions.run = gone  # type: ignore[method-assign]
        with pytest.raises(ActionError) as missing:  # the same code a local one has
            await b.actions.run(session_id, "actions", "mark", {})
        assert (missing.value.code, missing.value.status) == ("session_not_found", 404)
        a.actions.run = real  # type: ignore[method-assign]
    assert "the owner tripped" in caplog.text


async def test_a_request_nobody_takes_whose_owner_lets_go_runs_on_the_poster(
    pg_url: str,
) -> None:
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        session_id = (await a.create_session()).session.id
        assert a.relays.actions is not None
        a.relays.actions.stop()  # A will never take it
        async with asking(clock, b, session_id, "mark", n=2) as asked:
            await stored_requests(a, [None])  # stored, untaken
            await a.close_session(session_id)  # A lets the Session go
        assert asked.result == {"ran_on": b.host_id, "args": {"n": 2}}
        assert plugin(a).ran == [] and b.owns(session_id)
        assert await rows(a) == []


async def test_a_request_taken_by_a_host_that_lost_the_session_is_not_run_again(
    pg_url: str,
) -> None:
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        session_id = (await a.create_session()).session.id
        async with asking(clock, b, session_id, "hang") as asked:
            await stored_requests(a, [a.host_id])
            assert isinstance(a.backend, PostgresBackend)
            async with a.backend.database.connection() as connection:  # A's lease lapses
                await connection.execute(
                    "UPDATE leases SET expires_at = clock_timestamp() WHERE session_id = %s",
                    (session_id,),
                )
        plugin(a).release.set()
        assert asked.error is not None
        assert (asked.error.code, asked.error.status) == ("action_outcome_unknown", 503)
        assert f"host {a.host_id} took action 'hang'" in asked.error.message


async def test_a_request_the_owner_never_takes_is_withdrawn_after_the_wait(
    pg_url: str,
) -> None:
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        session_id = (await a.create_session()).session.id
        assert a.relays.actions is not None and b.relays.actions is not None
        a.relays.actions.stop()
        b.relays.actions.wait_seconds = 5
        async with asking(clock, b, session_id, "mark", step=1.0) as asked:
            pass
        assert asked.error is not None
        assert (asked.error.code, asked.error.status) == ("action_not_taken", 504)
        assert "within 5 s; it did not happen" in asked.error.message
        assert await rows(a) == [] and plugin(a).ran == plugin(b).ran == []


async def test_a_taken_request_unanswered_after_the_wait_has_an_unknown_outcome(
    pg_url: str,
) -> None:
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        session_id = (await a.create_session()).session.id
        assert b.relays.actions is not None
        b.relays.actions.wait_seconds = 5
        async with asking(clock, b, session_id, "hang", step=1.0) as asked:
            pass
        plugin(a).release.set()
        assert asked.error is not None
        assert (asked.error.code, asked.error.status) == ("action_outcome_unknown", 504)
        assert f"host {a.host_id} took" in asked.error.message
        assert await rows(a) == []  # forgotten: A's late answer finds no row


async def test_a_missed_wake_up_is_made_up_for_by_the_owners_poll(pg_url: str) -> None:
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        session_id = (await a.create_session()).session.id
        remote = b.backend.remote_actions()
        assert remote is not None and a.relays.actions is not None
        await a.close_session(session_id)
        a.relays.actions._unobserve()  # A will not hear the Session go live again
        request = await remote.request(
            session_id, "actions", "mark", {"n": 3}, via="elsewhere", lasts=60
        )
        for _ in range(100):  # its wake-up reaches A while A does not hold the Session
            await anyio.sleep(0.01)
            if (await remote.outcome(request)).stranded:
                break
        await a.resume(session_id)
        assert (await remote.outcome(request)).taken_by is None
        for _ in range(100):
            clock.advance(0.5)  # A's poll
            await anyio.sleep(0.02)
            outcome = await remote.outcome(request)
            if outcome.answer is not None:
                break
        assert outcome.answer == ActionAnswer({"ran_on": a.host_id, "args": {"n": 3}})
        assert outcome.taken_by == a.host_id and not outcome.stranded
        await remote.forget(request)


async def test_failures_to_reach_the_store_are_logged_not_raised(
    pg_url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.WARNING)
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        session_id = (await a.create_session()).session.id
        remote_a, remote_b = a.backend.remote_actions(), b.backend.remote_actions()
        assert remote_a is not None and remote_b is not None and a.relays.actions is not None

        async def unreachable(*args: object) -> None:
            raise StorageError("the database is away")

        # The owner cannot store its answer: the poster hears nothing, then withdraws
        # nothing (it was taken) and says the outcome is unknown.
        monkeypatch.setattr(remote_a, "answer", unreachable)
        monkeypatch.setattr(remote_b, "forget", unreachable)
        assert b.relays.actions is not None
        b.relays.actions.wait_seconds = 3
        async with asking(clock, b, session_id, "mark", step=1.0) as asked:
            pass
        assert asked.error is not None and asked.error.code == "action_outcome_unknown"
        # The owner gives up on storing its answer after its own attempts, which its
        # clock paces: the poster's deadline may pass before the last of them.
        await ticking_until(
            clock, lambda: "the answer to action 'mark'" in caplog.text, "the owner gave up"
        )
        assert "stays stored until it expires: the database is away" in caplog.text
        monkeypatch.setattr(remote_a, "take", unreachable)
        a.relays.actions._requested(session_id)
        await until(lambda: "(taken at the next poll)" in caplog.text)
        polls: list[str] = []

        async def away(taker: str) -> set[str]:
            polls.append(taker)
            raise StorageError("the database is away")

        monkeypatch.setattr(remote_a, "waiting", away)
        for _ in range(500):  # until A's poll failed three times (a deadline poll)
            if len(polls) >= 3:
                break
            clock.advance(0.5)
            await anyio.sleep(0.01)
        assert len(polls) >= 3
        assert caplog.text.count("actions: the database is away; polling again") == 1  # once


async def test_a_poster_whose_store_fails_while_it_waits_looks_again(
    pg_url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        session_id = (await a.create_session()).session.id
        remote_b = b.backend.remote_actions()
        assert remote_b is not None
        real = remote_b.outcome
        failures = [StorageError("the database blinked")] * 2

        async def blinking(request_id: int) -> object:
            if failures:
                raise failures.pop()
            return await real(request_id)

        monkeypatch.setattr(remote_b, "outcome", blinking)
        async with asking(clock, b, session_id, "mark", n=4) as asked:
            pass
        assert asked.result == {"ran_on": a.host_id, "args": {"n": 4}}
        assert caplog.text.count("the database blinked; looking again") == 1


async def test_the_actions_api_on_a_non_owner_answers_like_the_owner(
    pg_url: str, tmp_path: Path
) -> None:
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        session_id = (await a.create_session()).session.id
        settings = WebSettings(token=TOKEN, port=8765, static_dir=tmp_path)
        transport = httpx.ASGITransport(app=create_app(b, settings), raise_app_exceptions=False)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8765", headers=AUTH
        ) as http:
            url = f"/api/sessions/{session_id}/actions"
            # A relay is woken by a notification, else finds the request at its next poll on
            # the host's clock: one sent before A listens is found only then, so it ticks.
            ticked = anyio.Event()
            async with anyio.create_task_group() as group:
                group.start_soon(ticking, clock, ticked)
                with anyio.fail_after(WAIT):
                    done = await http.post(
                        url, json={"plugin": "actions", "action": "mark", "args": {}}
                    )
                    refused = await http.post(url, json={"plugin": "actions", "action": "refuse"})
                ticked.set()
            assert done.status_code == 200, done.text
            assert done.json() == {"result": {"ran_on": a.host_id, "args": {}}}
            assert refused.status_code == 409
            assert refused.json()["error"] == {"code": "conflict", "message": "already done"}


async def test_without_remote_actions_a_session_live_elsewhere_is_refused(
    pg_url: str,
) -> None:
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        session_id = (await a.create_session()).session.id
        b.actions.relay = None
        with pytest.raises(SessionLiveElsewhere):
            await b.actions.run(session_id, "actions", "mark", {})


# -- the table ------------------------------------------------------------------------


async def test_a_sessions_requests_are_claimed_one_at_a_time_and_only_under_a_lease(
    backend: PostgresBackend,
) -> None:
    remote = backend.remote_actions()
    first = await remote.request("s1", "p", "a", {"k": [1, "two"]}, via="host-b", lasts=60)
    second = await remote.request("s1", "p", "b", {}, via="host-b", lasts=60)
    assert await remote.take(["s1"], "host-a") == []  # host-a holds no lease
    assert await remote.waiting("host-a") == set()
    assert await remote.take([], "host-a") == []
    await backend.lease_backend("host-a").acquire("s1")
    assert await remote.waiting("host-a") == {"s1"}
    taken = await remote.take(["s1"], "host-a")
    assert [(r.id, r.action, r.args, r.via) for r in taken] == [
        (first, "a", {"k": [1, "two"]}, "host-b")
    ]
    assert await remote.take(["s1"], "host-a") == []  # the second waits for the first
    assert not await remote.withdraw(first)  # taken: not withdrawn
    await remote.release(first, "host-a")  # given back untouched: taken again
    assert [r.id for r in await remote.take(["s1"], "host-a")] == [first]
    await remote.answer(first, ActionAnswer(error={"code": "x", "message": "no"}, status=409))
    outcome = await remote.outcome(first)
    assert outcome.answer == ActionAnswer(error={"code": "x", "message": "no"}, status=409)
    await remote.release(first, "host-a")  # answered: stays answered
    assert (await remote.outcome(first)).answer is not None
    assert [r.id for r in await remote.take(["s1"], "host-a")] == [second]  # the next one
    await remote.forget(first)
    assert (await remote.outcome(first)).gone
    third = await remote.request("s2", "p", "a", {}, via="host-b", lasts=60)
    assert (await remote.outcome(third)).stranded  # nobody holds s2
    assert await remote.withdraw(third)


async def test_an_expired_request_is_never_taken_and_is_pruned_later(
    backend: PostgresBackend,
) -> None:
    remote = backend.remote_actions()
    await backend.lease_backend("host-a").acquire("s1")
    stale = await remote.request("s1", "p", "a", {}, via="host-b", lasts=0)
    fresh = await remote.request("s1", "p", "b", {}, via="host-b", lasts=60)
    assert [r.id for r in await remote.take(["s1"], "host-a")] == [fresh]  # not behind it
    assert await remote.prune(60) == 0  # its poster may still look at it
    async with backend.database.connection() as connection:
        await connection.execute(
            "UPDATE remote_actions SET expires_at = clock_timestamp() - interval '2 minutes'"
            " WHERE id = %s",
            (stale,),
        )
    assert await remote.prune(60) == 1
    assert (await remote.outcome(stale)).gone and not (await remote.outcome(fresh)).gone


async def test_stored_rows_that_do_not_parse_are_answered_or_named(
    backend: PostgresBackend, caplog: pytest.LogCaptureFixture
) -> None:
    remote = backend.remote_actions()
    await backend.lease_backend("host-a").acquire("s1")
    await backend.lease_backend("host-a").acquire("s2")
    bad = await remote.request("s1", "p", "a", {}, via="host-b", lasts=60)
    good = await remote.request("s2", "p", "a", {"ok": True}, via="host-b", lasts=60)
    async with backend.database.connection() as connection:
        await connection.execute("UPDATE remote_actions SET args = '[1]' WHERE id = %s", (bad,))
    taken = await remote.take(["s1", "s2"], "host-a")
    assert [(r.id, r.args) for r in taken] == [(good, {"ok": True})]  # the others still run
    answer = (await remote.outcome(bad)).answer
    assert answer is not None and answer.status == 500 and answer.error is not None
    assert answer.error["code"] == "storage_corrupt"
    assert f"remote action {bad} holds arguments that are not a JSON object" in caplog.text
    async with backend.database.connection() as connection:
        await connection.execute("UPDATE remote_actions SET answer = '{\"x\": 1}'")
    with pytest.raises(StorageError, match=rf"remote action {bad} holds an answer"):
        await remote.outcome(bad)
    async with backend.database.connection() as connection:
        await connection.execute(
            "UPDATE remote_actions SET args = 'not json', taken_by = NULL, answer = NULL"
        )
    assert await remote.take(["s1", "s2"], "host-a") == []
    assert "not a JSON object" in caplog.text


async def test_wake_ups_name_requested_sessions_and_answered_requests(
    backend: PostgresBackend,
) -> None:
    remote = backend.remote_actions()
    requested: list[str] = []
    answered: list[int] = []
    async with anyio.create_task_group() as group:
        group.start_soon(remote.listen, requested.append, answered.append)
        await until(lambda: remote.listening == 1, "the listener")
        request = await remote.request("s1", "p", "a", {}, via="host-b", lasts=60)
        await remote.answer(request, ActionAnswer("done"))
        async with backend.database.connection() as connection:
            await connection.execute("SELECT pg_notify(%s, 'a not-a-number')", (remote.channel,))
            await connection.execute("SELECT pg_notify(%s, 'junk')", (remote.channel,))
        await remote.answer(request, ActionAnswer("twice"))  # answered already: no wake-up
        await remote.request("s2", "p", "a", {}, via="host-b", lasts=60)
        await until(lambda: requested == ["s1", "s2"], "both requests")
        group.cancel_scope.cancel()
    assert answered == [request]
    assert (await remote.outcome(request)).answer == ActionAnswer("done")


async def test_a_request_removed_under_its_poster_is_asked_again(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        session_id = (await a.create_session()).session.id
        remote_b = b.backend.remote_actions()
        assert remote_b is not None and a.relays.actions is not None
        a.relays.actions.stop()  # A takes nothing
        real = remote_b.outcome
        removed: list[int] = []

        async def vanishing(request_id: int) -> object:
            if not removed:
                removed.append(request_id)
                await remote_b.forget(request_id)  # somebody removes the first request
            return await real(request_id)

        monkeypatch.setattr(remote_b, "outcome", vanishing)
        async with asking(clock, b, session_id, "mark", n=5) as asked:
            await until(lambda: removed, "the first request to vanish")
            await stored_requests(a, [None])  # asked again: a second request
            await a.close_session(session_id)  # then A lets the Session go
        assert asked.result == {"ran_on": b.host_id, "args": {"n": 5}}  # the third try, here
        assert plugin(a).ran == [] and await rows(a) == []


async def test_a_request_claimed_for_a_session_that_went_cold_is_given_back(
    pg_url: str,
) -> None:
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, _):
        session_id = (await a.create_session()).session.id
        remote = a.backend.remote_actions()
        assert remote is not None and a.relays.actions is not None
        a.relays.actions.stop()
        request_id = await remote.request(session_id, "actions", "mark", {}, via="b", lasts=60)
        [request] = await remote.take([session_id], a.host_id)
        await a.close_session(session_id)
        await a.relays.actions._run(request)
        outcome = await remote.outcome(request_id)
        assert outcome.taken_by is None and outcome.answer is None  # untouched, untaken
        assert plugin(a).ran == [] and a.relays.actions.ran == 0


async def test_the_owners_poll_removes_requests_long_expired(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("dsh.relay.actions.PRUNE_EVERY_POLLS", 1)
    clock = FakeClock()
    async with two_hosts(pg_url, clock) as (a, b):
        session_id = (await a.create_session()).session.id
        remote = b.backend.remote_actions()
        assert remote is not None
        stale = await remote.request(session_id, "actions", "mark", {}, via="b", lasts=0)
        async with a.backend.database.connection() as connection:  # type: ignore[attr-defined]
            await connection.execute(
                "UPDATE remote_actions SET expires_at = clock_timestamp() - interval '1 hour'"
            )
        for _ in range(100):
            clock.advance(0.5)
            await anyio.sleep(0.01)
            if (await remote.outcome(stale)).gone:
                break
        assert (await remote.outcome(stale)).gone
        assert plugin(a).ran == []
