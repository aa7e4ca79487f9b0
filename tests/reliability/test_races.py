"""Concurrent requests on one cold Session: it becomes live exactly once and nothing 5xx's.

A browser with two tabs, a double click or a reconnecting client can resume,
message, fork and read one cold Session at the same moment. Each round makes
a Session cold (a graceful restart of the real `dsh web`), then fires resumes,
messages, forks, history reads and live-stream handshakes at it all at once
over separate connections. What must hold:

- no request gets a 5xx; every one gets its documented status;
- the Session went live once: exactly one new `session/end-seed` (one
  lifecycle), and every message answered 202 is stored, in that lifecycle;
- every fork answered 201 is stored with its parent in its lineage.
"""

from __future__ import annotations

from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from dsh.session.types import END_SEED
from tests.support.webhost import WebHost, wait_for

from .figures import Figures
from .raw_http import ws_handshake
from .stored import read_data_dir

pytestmark = [pytest.mark.reliability]

ROUNDS = 4
BURST = {"resume": 6, "message": 6, "fork": 3, "history": 3, "live": 2}


async def burst(web: WebHost, session_id: str, round_no: int) -> list[tuple[str, int, Any]]:
    """Fire every request of `BURST` at once; return `(kind, status, body)` of each."""
    results: list[tuple[str, int, Any]] = []
    start = anyio.Event()
    limits = httpx.Limits(max_connections=64)
    async with httpx.AsyncClient(
        base_url=web.base_url, headers=web.headers, timeout=30, limits=limits
    ) as client:

        async def one(kind: str, index: int) -> None:
            await start.wait()
            path = f"/api/sessions/{session_id}"
            if kind == "resume":
                response = await client.post(f"{path}/resume")
            elif kind == "message":
                response = await client.post(
                    f"{path}/messages", json={"text": f"race r{round_no}-{index}"}
                )
            elif kind == "fork":
                response = await client.post(f"{path}/fork")
            elif kind == "history":
                response = await client.get(f"{path}/events")
            else:
                handshake = await anyio.to_thread.run_sync(
                    ws_handshake, web.base_url, f"{path}/live?token={web.token}"
                )
                results.append((kind, handshake.status, None))
                return
            body = response.json()
            results.append((kind, response.status_code, body))

        async with anyio.create_task_group() as group:
            for kind, count in BURST.items():
                for index in range(count):
                    group.start_soon(one, kind, index)
            await anyio.wait_all_tasks_blocked()
            start.set()
    return results


def test_concurrent_resumes_messages_and_forks_make_a_cold_session_live_once(
    tmp_path: Path, scale: int, figures: Figures
) -> None:
    counters: Counter[str] = Counter()
    expected = {"resume": 200, "message": 202, "fork": 201, "history": 200, "live": 101}
    with WebHost.start(tmp_path / "data", model="demo") as web:
        session_id = web.create_session()
        # A Session left unused would go to the trash when the host stops.
        assert web.post(f"/api/sessions/{session_id}/messages", {"text": "hi"}).status_code == 202
        wait_for(partial(all_answered, web, session_id, ["hi"]), what="the first answer")
        for round_no in range(ROUNDS * scale):
            assert web.terminate() == 0
            web.boot()
            before = read_data_dir(web.data_dir).sessions[session_id]
            results = anyio.run(burst, web, session_id, round_no)
            for kind, status, body in results:
                assert status == expected[kind], (kind, status, body)
                counters[f"{kind}_{status}"] += 1
            messages = [f"race r{round_no}-{index}" for index in range(BURST["message"])]
            wait_for(
                partial(all_answered, web, session_id, messages),
                what="every raced message to be answered",
            )
            assert web.terminate() == 0
            web.boot()
            data = read_data_dir(web.data_dir)
            after = data.sessions[session_id]
            new = after.events[len(before.events) :]
            assert [event.type for event in new].count(END_SEED) == 1, "went live twice"
            texts = [e.data.get("text") for e in new if isinstance(e.data, dict)]
            assert all(texts.count(text) == 1 for text in messages), texts
            forks = [body["session"]["id"] for kind, _s, body in results if kind == "fork"]
            for child in forks:
                lineage = data.sessions[child].header.lineage
                assert lineage is not None and lineage.parent_id == session_id
            counters["rounds"] += 1
            counters["concurrent_requests"] += len(results)
    figures.merge("races", counters)


def all_answered(web: WebHost, session_id: str, messages: list[str]) -> bool:
    """Every message is in the log as a `message/user`, and no turn is still running."""
    events = web.all_events(session_id)["events"]
    texts = {
        event["data"]["text"]
        for event in events
        if event["type"] == "message/user" and isinstance(event["data"], dict)
    }
    return set(messages) <= texts and bool(events) and events[-1]["type"] == "turn/end"
