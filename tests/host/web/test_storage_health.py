"""Storage seen through the web host: health, a stalled backend, hostile files, rewrites.

(`/api/health` and the read routes live in `dsh.web.api`; what they may show is
decided by the Host's storage reader. These tests drive both over HTTP.)
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

import dsh
from dsh.host.host import Host
from dsh.persistence import Backend, JsonlBackend, MemoryBackend
from dsh.testing import FakeClock, FaultyBackend
from dsh.web import WebSettings, create_app
from tests.support.deadlines import WAIT

from .conftest import AUTH, MARKED, MarkerPlugin

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def serving(
    backend: Backend, settings: WebSettings, clock: FakeClock | None = None
) -> AsyncIterator[tuple[Host, httpx.AsyncClient]]:
    from dsh.models.absent import AbsentModel

    async with Host(backend=backend, model=AbsentModel(), clock=clock or FakeClock()) as host:
        host.pm.register(MarkerPlugin(), name="test-marker")
        app = create_app(host, settings)
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8765", headers=AUTH
        ) as client:
            yield host, client


class NotifyHealth:
    @dsh.hookimpl
    def dsh_health(self) -> dict[str, Any]:
        return {"notify": {"pending": 0, "failed": 1}}


async def test_a_plugins_health_rides_along_when_storage_is_degraded(
    settings: WebSettings,
) -> None:
    faulty = FaultyBackend(MemoryBackend())
    async with serving(faulty, settings) as (host, client):
        host.pm.register(NotifyHealth(), name="notify")
        session = (await client.post("/api/sessions")).json()["session"]
        faulty.fail("append", times=None)
        host.live.append(host.live.get(session["id"]), MARKED, {})
        with anyio.fail_after(WAIT):
            while (response := await client.get("/api/health")).status_code == 200:
                await anyio.lowlevel.checkpoint()
        assert response.json()["notify"] == {"pending": 0, "failed": 1}
        assert response.json()["storage"] == "degraded"
        faulty.clear()
        assert await host.live.flush(host.live.get(session["id"]))


async def test_health_is_degraded_while_events_are_unconfirmed_and_ok_again_after(
    settings: WebSettings,
) -> None:
    faulty = FaultyBackend(MemoryBackend())
    async with serving(faulty, settings) as (host, client):
        session = (await client.post("/api/sessions")).json()["session"]
        faulty.fail("append", times=None)
        live = host.live.get(session["id"])
        for _ in range(3):
            host.live.append(live, MARKED, {})
        with anyio.fail_after(WAIT):
            while (response := await client.get("/api/health")).status_code == 200:
                await anyio.lowlevel.checkpoint()
        body = response.json()
        assert response.status_code == 503
        assert body == {
            "ok": False,
            "version": dsh.__version__,
            "storage": "degraded",
            "sessions": 1,
            "unconfirmed": 3,
            "error": {
                "code": "storage_degraded",
                "message": "1 session has 3 events not yet stored; storage is being retried",
            },
        }
        faulty.clear()
        assert await host.live.flush(live)
        response = await client.get("/api/health")
        assert (response.status_code, response.json()) == (
            200,
            {"ok": True, "version": dsh.__version__},
        )


async def test_a_stalled_backend_never_blocks_health_or_the_page(
    settings: WebSettings,
) -> None:
    faulty = FaultyBackend(MemoryBackend())
    async with serving(faulty, settings) as (_, client):
        hold = faulty.hold("list")
        async with anyio.create_task_group() as group:
            group.start_soon(client.get, "/api/sessions")
            with anyio.fail_after(WAIT):
                await hold.entered.wait()
                health = await client.get("/api/health")
                page = await client.get("/")
            assert (health.status_code, page.status_code) == (200, 200)
            hold.release()


async def test_the_session_list_skips_hostile_files_for_everyone(
    tmp_path: Path, settings: WebSettings
) -> None:
    async with serving(JsonlBackend(tmp_path), settings) as (_, client):
        good = (await client.post("/api/sessions")).json()["session"]["id"]
        sessions = tmp_path / "sessions"
        (sessions / "x.jsonl").write_bytes(b"")
        (sessions / "y.jsonl").mkdir()
        os.mkfifo(sessions / "fifo.jsonl")
        (sessions / "link.jsonl").symlink_to(sessions / f"{good}.jsonl")
        (sessions / f"{good}.jsonl.bak").write_bytes((sessions / f"{good}.jsonl").read_bytes())
        with anyio.fail_after(WAIT):
            response = await client.get("/api/sessions")
        assert response.status_code == 200
        assert [row["id"] for row in response.json()["sessions"]] == [good]
        for bad in ("x", "y", "fifo", "link"):
            refused = await client.get(f"/api/sessions/{bad}/events")
            assert refused.status_code in (404, 500, 503), (bad, refused.text)
            assert set(refused.json()) == {"error"}


async def test_a_jsonl_log_rewritten_behind_the_host_loses_its_views(
    tmp_path: Path, settings: WebSettings
) -> None:
    async with serving(JsonlBackend(tmp_path), settings) as (host, client):
        session_id = (await client.post("/api/sessions")).json()["session"]["id"]
        live = host.live.get(session_id)
        host.live.append(live, MARKED, {"n": 0})
        assert await host.live.flush(live)
        page = (await client.get(f"/api/sessions/{session_id}/events")).json()
        assert set(page["views"]) == {"0"}

        path = tmp_path / "sessions" / f"{session_id}.jsonl"
        original = path.read_bytes()
        header_line, event_line = original.splitlines()
        event = json.loads(event_line)
        event["data"] = {"n": "forged"}
        forged = tmp_path / "forged"
        forged.write_bytes(
            header_line + b"\n" + json.dumps(event, separators=(",", ":")).encode() + b"\n"
        )
        os.replace(forged, path)

        page = (await client.get(f"/api/sessions/{session_id}/events")).json()
        assert page["views"] == {}
        assert page["events"][0]["data"] == {"n": 0}  # the live events, still shown raw

        restored = tmp_path / "restored"
        restored.write_bytes(original)
        os.replace(restored, path)
        page = (await client.get(f"/api/sessions/{session_id}/events")).json()
        assert set(page["views"]) == {"0"}


async def test_a_create_that_storage_refuses_answers_503_and_lists_nothing(
    settings: WebSettings,
) -> None:
    faulty = FaultyBackend(MemoryBackend())
    faulty.fail("initialize", after_write=True, times=None)
    async with serving(faulty, settings) as (_, client):
        response = await client.post("/api/sessions")
        assert response.status_code == 503
        message = response.json()["error"]["message"]
        assert "seq -1" not in message and "its creation" in message
        assert (await client.get("/api/sessions")).json() == {"sessions": []}


async def test_a_cold_session_is_described_without_reading_its_events(
    tmp_path: Path, settings: WebSettings
) -> None:
    inner = JsonlBackend(tmp_path)
    recorded: list[str] = []

    class Watching(FaultyBackend):
        async def inspect(self, session_id: str) -> Any:
            recorded.append("inspect")
            return await super().inspect(session_id)

        async def read(self, *args: Any, **kwargs: Any) -> Any:
            recorded.append("read")
            return await super().read(*args, **kwargs)

    async with serving(Watching(inner), settings) as (host, client):
        session_id = (await client.post("/api/sessions")).json()["session"]["id"]
        host.live.append(host.live.get(session_id), MARKED, {})
        await host.close_session(session_id)
        recorded.clear()
        described = (await client.get(f"/api/sessions/{session_id}")).json()
        listed = (await client.get("/api/sessions")).json()["sessions"]
    assert (described["live"], described["length"], described["agent"]) == (False, 1, None)
    assert listed[0]["length"] == 1
    assert recorded == []
