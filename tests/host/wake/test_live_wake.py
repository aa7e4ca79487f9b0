"""The live stream across hibernation and wake: a watcher of a cold Session sees it delivered."""

from __future__ import annotations

from typing import Any

import pytest

from dsh.testing import FakeClock
from dsh.wake import MemoryWakeBackend
from dsh.web.live import LiveHub
from tests.support.deadlines import until
from tests.support.frames import drain

from .alarm_plugin import RANG, set_alarm
from .support import alarm_host

pytestmark = pytest.mark.anyio


def kinds(frames: list[dict[str, Any]]) -> list[str]:
    described = []
    for frame in frames:
        if frame["kind"] == "event":
            suffix = "+view" if "sidecar" in frame else ""
            described.append(f"{frame['event']['type']}@{frame['event']['seq']}{suffix}")
        elif frame["kind"] == "live":
            described.append(f"live={frame['live']}")
        else:
            described.append(frame["kind"])
    return described


async def test_a_watcher_sees_its_session_go_cold_then_woken_and_its_alarm_delivered() -> None:
    clock = FakeClock()
    async with alarm_host(clock, wake_backend=MemoryWakeBackend({}), idle_seconds=5) as host:
        hub = LiveHub(host)
        hub.start()
        agent = await host.create_session()
        at = clock.wall_ms() + 60_000
        set_alarm(agent, at)
        assert await host.live.flush(agent.session)
        session_id = agent.session.id
        watcher = hub.subscribe(session_id, len(agent.session), lambda: None)
        hibernator = host.lifecycle.hibernator
        assert hibernator is not None and hibernator.holds(session_id) == 1
        assert drain(watcher) == [{"kind": "hello", "tail": 1}]
        clock.advance(5)
        await until(lambda: (hibernator.deadline(session_id) or 0) > clock.wall_ms())
        assert host.agent(session_id) is agent, "a watched Session does not hibernate"
        hub.unsubscribe(watcher)
        assert hibernator.holds(session_id) == 0
        clock.advance(5)
        await until(lambda: hibernator.hibernated == 1)

        # A tab opens the cold Session and just watches.
        tab = hub.subscribe(session_id, len(agent.session), lambda: None)
        assert drain(tab) == [{"kind": "hello", "tail": 1}]
        clock.advance(50)
        frames: list[dict[str, Any]] = []
        await until(lambda: frames.extend(drain(tab)) or any("sidecar" in f for f in frames))
        assert kinds(frames) == [
            "session/end-seed@1",
            "live=True",
            f"{RANG}@2",
            f"{RANG}@2+view",
        ]
        assert frames[-1]["sidecar"]["view"] == {"rang": at}
        # Delivered, and the tab still watches: it stays live, and says so when closed.
        await host.close_session(session_id)
        assert kinds(drain(tab)) == ["live=False"]
        hub.unsubscribe(tab)
        hub.close()
