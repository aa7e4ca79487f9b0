"""A live stream on a host that does not own the Session, fed from the database."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from dsh.host.host import Host
from dsh.host.leases import LeaseSettings
from dsh.testing import FakeClock, FakeModel
from dsh.web.live import LiveHub, Subscription
from tests.host.wake.alarm_plugin import RANG, AlarmPlugin
from tests.support.deadlines import until

from .test_backend import backend_for

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


@asynccontextmanager
async def three_hosts(url: str) -> AsyncIterator[tuple[Host, Host, Host]]:
    clock = FakeClock()
    made = []
    for _ in range(3):
        host = Host(
            backend=backend_for(url),
            model=FakeModel(["answered on A"]),
            clock=clock,
            lease_settings=LeaseSettings(ttl_seconds=30, renew_seconds=3),
        )
        host.pm.register(AlarmPlugin(), name="alarm")
        made.append(host)
    try:
        async with made[0] as a, made[1] as b, made[2] as c:
            yield a, b, c
    finally:
        for host in made:
            await host.backend.aclose()


class Watcher:
    """One subscription to a hub with its `follow` task, and the frames it got."""

    def __init__(self, hub: LiveHub, subscription: Subscription) -> None:
        self.hub = hub
        self.subscription = subscription
        self.frames: list[dict[str, Any]] = []

    def drain(self) -> list[dict[str, Any]]:
        while True:
            try:
                self.frames.append(json.loads(self.subscription.frames.receive_nowait()))
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                return self.frames

    def described(self) -> list[str]:
        out = []
        for frame in self.drain():
            if frame["kind"] == "event":
                suffix = "+view" if "sidecar" in frame else ""
                out.append(f"{frame['event']['type']}@{frame['event']['seq']}{suffix}")
            elif frame["kind"] == "live":
                out.append(f"live={frame['live']}")
            elif frame["kind"] == "state":
                out.append(f"state {frame['plugin']}")
            else:
                out.append(frame["kind"])
        return out


async def test_a_stream_on_a_third_host_carries_the_owners_stored_events_and_views(
    pg_url: str,
) -> None:
    async with three_hosts(pg_url) as (a, b, c), anyio.create_task_group() as group:
        agent = await a.create_session()
        session_id = agent.session.id
        hub = LiveHub(c)
        hub.start()
        tail = await c.catalogue.tail(session_id)
        watcher = Watcher(hub, hub.subscribe(session_id, tail, lambda: None))
        group.start_soon(hub.follow, watcher.subscription)
        await until(lambda: "live=True" in watcher.described(), "C to see it live on A")
        assert watcher.frames[0] == {"kind": "hello", "tail": tail}

        # A stores an alarm ringing: C streams it, with its view, once stored.
        a.live.append(agent.session, RANG, {"at": 5})
        assert await a.live.flush(agent.session)
        await until(lambda: f"{RANG}@{tail}+view" in watcher.described(), "the rang event")
        sidecar = next(f for f in watcher.frames if "sidecar" in f)
        assert sidecar["sidecar"] == {"for": "event", "view": {"rang": 5}}

        # A message through B runs its turn on A; C streams all of it, in order, once.
        posted = await b.sessions.post_message(session_id, "hello from B")
        assert posted.owner == a.host_id
        await until(lambda: "turn/end" in " ".join(watcher.described()), "the turn, on C")
        events = [f["event"] for f in watcher.frames if f["kind"] == "event" and "sidecar" not in f]
        assert [event["seq"] for event in events] == list(range(tail, tail + len(events)))
        stored = await c.backend.read(session_id, start=tail)
        assert [event.to_dict() for event in stored] == events  # exactly what is stored

        # "live" means live on some host, in the list and the Session's row.
        listed = {row.id: row for row in await c.catalogue.list()}
        assert listed[session_id].live is True and c.agent(session_id) is None
        assert await c.catalogue.live_elsewhere(session_id) == a.host_id
        assert await c.leases.held_elsewhere() == {session_id: a.host_id}
        assert await c.leases.held_elsewhere(["0123456789abcdef"]) == {}
        assert await a.leases.held_elsewhere() == {}  # its own lease is not elsewhere
        await a.close_session(session_id)
        await until(lambda: "live=False" in watcher.described(), "C to see it go cold")
        listed = {row.id: row for row in await c.catalogue.list()}
        assert listed[session_id].live is False
        assert await c.catalogue.live_elsewhere(session_id) is None

        # Live on C itself now: its own observations take over, without a repeat.
        before = len([f for f in watcher.frames if f["kind"] == "event"])
        await c.resume(session_id)
        await until(lambda: "session/end-seed" in " ".join(watcher.described()[before:]))
        seqs = [
            f["event"]["seq"] for f in watcher.frames if f["kind"] == "event" and "sidecar" not in f
        ]
        assert len(seqs) == len(set(seqs)) and seqs == sorted(seqs)
        hub.unsubscribe(watcher.subscription)
        hub.close()
        group.cancel_scope.cancel()


async def test_without_a_shared_store_follow_returns_at_once() -> None:
    from dsh.persistence.memory import MemoryBackend

    async with Host(backend=MemoryBackend(), model=FakeModel()) as host:
        hub = LiveHub(host)
        hub.start()
        subscription = hub.subscribe("0123456789abcdef", 0, lambda: None)
        with anyio.fail_after(1):
            await hub.follow(subscription)
        hub.unsubscribe(subscription)
        hub.close()
