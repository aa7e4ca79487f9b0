from __future__ import annotations

import logging
from pathlib import Path

import anyio
import httpx
import pytest
from fastapi import FastAPI

from dsh.host.host import Host
from dsh.models import DemoModel
from dsh.persistence import MemoryBackend
from dsh.plugins.overlay import PluginSpec
from dsh.web import WebServer, WebSettings, build_web_app, create_app
from dsh.web.errors import WebStartupError
from dsh.web.state import WebState
from tests.support.deadlines import WAIT

from .conftest import AUTH, PLAIN

pytestmark = pytest.mark.anyio


async def test_closing_the_host_stops_the_apps_live_stream(
    host: Host, settings: WebSettings
) -> None:
    app = create_app(host, settings)
    state = app.state.web
    assert isinstance(state, WebState)
    session = (await host.create_session()).session
    subscription = state.hub.subscribe(session.id, 0, lambda: None)
    await host.aclose()
    assert subscription.end_code == 1001
    state.hub.unsubscribe(subscription)


async def test_a_built_app_answers_503_until_its_host_runs(settings: WebSettings) -> None:
    app = build_web_app(lambda: Host(backend=MemoryBackend(), model=DemoModel()), settings)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8765", headers=AUTH
    ) as http:
        response = await http.get("/api/sessions")
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "host_starting"
        assert (await http.get("/api/health")).status_code == 200


async def test_the_lifespan_runs_the_host_and_closes_it_flushing_its_sessions(
    settings: WebSettings, tmp_path: Path
) -> None:
    backend = MemoryBackend()
    hosts: list[Host] = []

    def make_host() -> Host:
        hosts.append(Host(backend=backend, model=DemoModel(), cwd=str(tmp_path)))
        return hosts[-1]

    app = build_web_app(make_host, settings.model_copy(update={"port": 0}))
    server = WebServer(app, settings.model_copy(update={"port": 0}))
    async with anyio.create_task_group() as group:
        group.start_soon(server.run_until_stopped)
        with anyio.fail_after(WAIT):
            await server.listening.wait()
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{server.port}", headers=AUTH
        ) as http:
            created = (await http.post("/api/sessions")).json()["session"]
        (host,) = hosts
        agent = host.agent(created["id"])
        assert agent is not None
        host.live.append(agent.session, PLAIN, {"unflushed": True})
        server.stop()
    assert host.agents() == []
    assert await backend.cursor(created["id"]) == 1
    assert not hasattr(app.state, "web")


async def test_a_host_that_cannot_start_is_a_startup_error_naming_the_cause(
    settings: WebSettings, caplog: pytest.LogCaptureFixture
) -> None:
    def make_host() -> Host:
        return Host(
            backend=MemoryBackend(), model=DemoModel(), plugins=[PluginSpec("no-such-plugin")]
        )

    app = build_web_app(make_host, settings)
    server = WebServer(app, settings.model_copy(update={"port": 0}))
    with (
        caplog.at_level(logging.INFO, logger="uvicorn.error"),
        pytest.raises(WebStartupError, match="no-such-plugin") as failed,
    ):
        await server.run_until_stopped()
    assert app.state.startup_error is failed.value.__cause__
    assert not server.listening.is_set()
    # dsh names a plugin it cannot load in one line: uvicorn's traceback would bury it.
    assert "Traceback" not in caplog.text and "startup failed" not in caplog.text


async def test_an_app_without_a_recorded_cause_still_reports_the_failure(
    settings: WebSettings, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        def __init__(self, app: FastAPI) -> None:
            self.app = app

        async def __aenter__(self) -> None:
            raise RuntimeError("lifespan")

        async def __aexit__(self, *exc: object) -> None:
            return None

    app = FastAPI(lifespan=Broken)
    server = WebServer(app, settings.model_copy(update={"port": 0}))
    with (
        caplog.at_level(logging.INFO, logger="uvicorn.error"),
        pytest.raises(WebStartupError, match=r"failed to start$"),
    ):
        await server.run_until_stopped()
    assert "Traceback" in caplog.text  # not an error a person can act on: a bug, kept
