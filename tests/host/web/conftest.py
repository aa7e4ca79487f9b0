"""Fixtures for the web host: a running Host on a storage double, the app, clients, a server."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from dsh.host.host import Host
from dsh.models import ModelReply, ModelRequest
from dsh.models.base import DeltaSink, reasoning_channel
from dsh.persistence import LogMark, MemoryBackend, StoredSession
from dsh.persistence.backend import StoredSummary
from dsh.plugins.context import ClientModule
from dsh.plugins.hookspecs import hookimpl
from dsh.session.event import SessionEvent
from dsh.session.header import SessionHeader
from dsh.session.log import Session
from dsh.testing import FakeClock
from dsh.web import WebServer, WebSettings, create_app
from tests.support.deadlines import WAIT

TOKEN = "test-token-Zx9"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MARKED = "test/marked"
PLAIN = "test/plain"


class StorageDouble(MemoryBackend):
    """A `MemoryBackend` a test can fail (per operation, `errors`), count (`calls`), and
    rewrite behind the host's back (`tamper`, which gives the log a new incarnation, as a
    real backend does when it notices a rewrite)."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: dict[str, Exception] = {}
        self.calls: Counter[str] = Counter()

    @property
    def reads(self) -> int:
        return sum(self.calls[name] for name in ("cursor", "mark", "header", "read", "inspect"))

    def _enter(self, operation: str) -> None:
        self.calls[operation] += 1
        error = self.errors.get(operation)
        if error is not None:
            raise error

    def tamper(
        self,
        session_id: str,
        *,
        header: SessionHeader | None = None,
        events: list[SessionEvent] | None = None,
    ) -> None:
        log = self._logs[session_id]
        if header is not None:
            log.header = header
        if events is not None:
            log.events = list(events)
        log.incarnation = next(self._incarnations)

    def stored_events(self, session_id: str) -> list[SessionEvent]:
        return list(self._logs[session_id].events)

    async def initialize(self, header: Any, events: Any) -> None:
        self._enter("initialize")
        await super().initialize(header, events)

    async def append(self, session_id: str, events: Any) -> None:
        self._enter("append")
        await super().append(session_id, events)

    async def cursor(self, session_id: str) -> int | None:
        self._enter("cursor")
        return await super().cursor(session_id)

    async def mark(self, session_id: str) -> LogMark | None:
        self._enter("mark")
        return await super().mark(session_id)

    async def header(self, session_id: str) -> SessionHeader | None:
        self._enter("header")
        return await super().header(session_id)

    async def read(self, session_id: str, *args: Any, **kwargs: Any) -> list[SessionEvent]:
        self._enter("read")
        return await super().read(session_id, *args, **kwargs)

    async def inspect(self, session_id: str) -> StoredSession | None:
        self._enter("inspect")
        return await super().inspect(session_id)

    async def list(self) -> list[StoredSummary]:
        self._enter("list")
        return await super().list()


class StreamingModel:
    """Replies "Hello" in two streamed fragments, optionally waiting for a gate first.

    With `thoughts` set, it first streams them on the reasoning channel and
    stores them as the reply's reasoning.
    """

    name = "streaming-test"

    def __init__(self) -> None:
        self.gate: anyio.Event | None = None
        self.calls = 0
        self.thoughts: list[str] = []

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        self.calls += 1
        if self.gate is not None:
            await self.gate.wait()
        reasoning = reasoning_channel(on_delta)
        for thought in self.thoughts:
            assert reasoning is not None
            reasoning(thought)
        if on_delta is not None:
            on_delta("Hel")
            on_delta("lo")
        return ModelReply(text="Hello", reasoning="".join(self.thoughts) or None)


class MarkerPlugin:
    """Views events of type `test/marked`; counts how often it was asked."""

    def __init__(self) -> None:
        self.asked = 0

    @hookimpl
    def dsh_event_view(self, session: Session, event: SessionEvent) -> dict[str, Any] | None:
        self.asked += 1
        if event.type != MARKED:
            return None
        return {"marked": event.data, "seq": event.seq}


class PublicationCounter:
    """Counts `dsh_agent_published` calls."""

    def __init__(self) -> None:
        self.published: list[str] = []

    @hookimpl
    def dsh_agent_published(self, agent: Any) -> None:
        self.published.append(agent.session.id)


@dataclass
class UiPlugin:
    """Ships browser modules (files in a temporary folder)."""

    modules: list[ClientModule] = field(default_factory=list)

    @hookimpl
    def dsh_client_modules(self) -> list[ClientModule]:
        return list(self.modules)


class Gate:
    """A store listener whose flush answers what the test says, when the test says."""

    def __init__(self) -> None:
        self.outcomes: list[bool | Exception | None] = []
        self.holds: list[anyio.Event] = []
        self.entered = 0

    def on_append(self, session: Session, event: SessionEvent) -> None:
        return None

    async def flush(self, session: Session) -> bool | None:
        self.entered += 1
        if self.holds:
            await self.holds.pop(0).wait()
        outcome: bool | Exception | None = self.outcomes.pop(0) if self.outcomes else True
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


@pytest.fixture
def backend() -> StorageDouble:
    return StorageDouble()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def model() -> StreamingModel:
    return StreamingModel()


@pytest.fixture
def marker() -> MarkerPlugin:
    return MarkerPlugin()


@pytest.fixture
def publications() -> PublicationCounter:
    return PublicationCounter()


@pytest.fixture
async def host(
    backend: StorageDouble,
    clock: FakeClock,
    model: StreamingModel,
    marker: MarkerPlugin,
    publications: PublicationCounter,
    tmp_path: Path,
) -> AsyncIterator[Host]:
    async with Host(backend=backend, model=model, clock=clock, cwd=str(tmp_path)) as running:
        running.pm.register(marker, name="test-marker")
        running.pm.register(publications, name="test-publications")
        yield running


@pytest.fixture
def settings(static_dir: Path) -> WebSettings:
    return WebSettings(
        token=TOKEN, port=8765, queue_frames=64, close_timeout=2.0, static_dir=static_dir
    )


@pytest.fixture
def app(host: Host, settings: WebSettings) -> Any:
    return create_app(host, settings)


@pytest.fixture
async def client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8765", headers=AUTH
    ) as http:
        yield http


@pytest.fixture
async def anonymous(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
        yield http


@dataclass
class Running:
    """A real uvicorn server on 127.0.0.1 with a free port."""

    server: WebServer
    base: str

    @property
    def port(self) -> int:
        return self.server.port

    def ws_url(self, session_id: str, token: str | None = TOKEN) -> str:
        query = "" if token is None else f"?token={token}"
        return f"ws://127.0.0.1:{self.port}/api/sessions/{session_id}/live{query}"

    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def connect(self, session_id: str, **kwargs: Any) -> Any:
        kwargs.setdefault("origin", self.origin())
        kwargs.setdefault("open_timeout", 5)
        return connect(self.ws_url(session_id), **kwargs)


@pytest.fixture
async def served(host: Host, settings: WebSettings) -> AsyncIterator[Running]:
    live_settings = settings.model_copy(update={"port": 0})
    app = create_app(host, live_settings)
    server = WebServer(app, live_settings)
    async with anyio.create_task_group() as group:
        group.start_soon(server.run_until_stopped)
        with anyio.fail_after(WAIT):
            await server.listening.wait()
        yield Running(server, f"http://127.0.0.1:{server.port}")
        server.stop()


async def receive_json(ws: ClientConnection) -> dict[str, Any]:
    """The next frame, decoded; fails after `WAIT` seconds."""
    with anyio.fail_after(WAIT):
        frame = await ws.recv()
    decoded: dict[str, Any] = json.loads(frame)
    return decoded


async def wait_until(condition: Callable[[], bool]) -> None:
    """Let tasks run until `condition()` holds; fail after `WAIT` seconds."""
    with anyio.fail_after(WAIT):
        while not condition():
            await anyio.lowlevel.checkpoint()


@pytest.fixture
def static_dir(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "static"
    folder.mkdir()
    (folder / "index.html").write_text("<!doctype html><title>t</title>", encoding="utf-8")
    (folder / "app.js").write_text("export const x = 1;\n", encoding="utf-8")
    (folder / "style.css").write_text("body{}\n", encoding="utf-8")
    (folder / "blob.bin").write_bytes(b"\x00\x01")
    (folder / ".hidden").write_text("secret", encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "deep.mjs").write_text("export {};\n", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("outside", encoding="utf-8")
    (folder / "escape.txt").symlink_to(tmp_path / "outside.txt")
    yield folder
