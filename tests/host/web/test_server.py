from __future__ import annotations

import errno
import io
import json
import logging
import os
import re
import secrets
import signal
import socket
import threading
from contextlib import AsyncExitStack
from pathlib import Path
from urllib.parse import quote

import anyio
import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from dsh.host.host import Host
from dsh.models import DemoModel
from dsh.persistence import MemoryBackend
from dsh.persistence.errors import StorageError
from dsh.web import WebServer, WebSettings, create_app, serve
from dsh.web.errors import ListenError
from dsh.web.server import RedactToken, display_host, listening_socket, public_url
from tests.support.deadlines import WAIT

from .conftest import TOKEN, StorageDouble, wait_until

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("host", "shown"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("0.0.0.0", "127.0.0.1"),
        ("", "127.0.0.1"),
        ("::", "[::1]"),
        ("::1", "[::1]"),
        ("localhost", "localhost"),
    ],
)
def test_the_url_names_a_host_a_browser_can_reach(host: str, shown: str) -> None:
    assert display_host(host) == shown


def test_the_url_carries_the_quoted_token() -> None:
    assert public_url("127.0.0.1", 8765, "a/b c") == "http://127.0.0.1:8765/?token=a%2Fb%20c"


def test_a_busy_port_is_an_error_naming_the_port_and_the_option() -> None:
    taken = listening_socket("127.0.0.1", 0)
    taken.listen()
    port = taken.getsockname()[1]
    try:
        with pytest.raises(ListenError) as refused:
            listening_socket("127.0.0.1", port)
    finally:
        taken.close()
    assert str(refused.value) == (
        f"port {port} is already in use on 127.0.0.1 (another dsh web, or another program); "
        "choose another with --port N, or --port 0 for a free one"
    )
    assert isinstance(refused.value.__cause__, OSError)


def test_an_address_of_another_machine_or_no_address_names_the_host_option() -> None:
    with pytest.raises(ListenError, match=r"cannot listen on 192\.0\.2\.1: it is not an address"):
        listening_socket("192.0.2.1", 0)  # TEST-NET-1: never one of this machine's
    with pytest.raises(ListenError, match=r"cannot listen on --host 'no\.such\.host\.invalid'"):
        listening_socket("no.such.host.invalid", 0)


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (errno.EACCES, "no permission to listen on 127.0.0.1:80 (ports below 1024 need"),
        (errno.EMFILE, "cannot listen on 127.0.0.1:80: Too many open files"),
    ],
)
def test_other_bind_failures_name_the_address(
    monkeypatch: pytest.MonkeyPatch, code: int, says: str
) -> None:
    def refuse(self: socket.socket, address: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(socket.socket, "bind", refuse)
    with pytest.raises(ListenError, match=re.escape(says)):
        listening_socket("127.0.0.1", 80)


def record(msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("uvicorn.error", logging.INFO, __file__, 1, msg, args, None)


def test_the_token_is_redacted_from_log_arguments_and_messages() -> None:
    redact = RedactToken("s3cret")
    line = record('%s - "WebSocket %s" [accepted]', "1.2.3.4:5", "/api/x/live?token=s3cret&a=1")
    assert redact.filter(line)
    assert (
        line.getMessage() == '1.2.3.4:5 - "WebSocket /api/x/live?token=[redacted]&a=1" [accepted]'
    )
    plain = record("token s3cret in text, number %d", 7)
    redact.filter(plain)
    assert plain.getMessage() == "token [redacted] in text, number 7"
    guessed = record("GET /?token=wrong-guess")
    redact.filter(guessed)
    assert "wrong-guess" not in guessed.getMessage()


async def test_serve_prints_the_url_once_listening_and_stops_gracefully_on_sigterm(
    tmp_path: Path,
) -> None:
    assert threading.current_thread() is threading.main_thread()
    backend = MemoryBackend()
    hosts: list[Host] = []

    def make_host() -> Host:
        hosts.append(Host(backend=backend, model=DemoModel(), cwd=str(tmp_path)))
        return hosts[-1]

    stdout = io.StringIO()
    previous = signal.getsignal(signal.SIGTERM)
    settings = WebSettings(token=TOKEN, port=0)
    uvicorn_loggers = [
        logging.getLogger(name) for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
    ]
    saved = [(logger.handlers[:], logger.propagate, logger.level) for logger in uvicorn_loggers]
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: serve(settings, make_host, stdout=stdout))
            await wait_until(lambda: bool(stdout.getvalue()))
            blank, line = stdout.getvalue().split("\n", 1)
            assert blank == "", "the URL line is set apart"
            assert line.startswith("dsh web: http://127.0.0.1:") and line.endswith(
                f"/?token={TOKEN}\n"
            )
            base = line.removeprefix("dsh web: ").split("/?")[0]
            async with httpx.AsyncClient(
                base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}
            ) as http:
                created = (await http.post("/api/sessions")).json()["session"]
                await http.post(f"/api/sessions/{created['id']}/messages", json={"text": "hi"})
            signal.raise_signal(signal.SIGTERM)
    finally:
        for logger, (handlers, propagate, level) in zip(uvicorn_loggers, saved, strict=True):
            logger.handlers[:] = handlers
            logger.propagate = propagate
            logger.setLevel(level)
    assert signal.getsignal(signal.SIGTERM) is previous
    (host,) = hosts
    assert host.agents() == []
    assert (await backend.cursor(created["id"]) or 0) >= 1
    assert stdout.getvalue().count("dsh web:") == 1


def test_binding_a_named_host_resolves_it() -> None:
    sock = listening_socket("localhost", 0)
    try:
        assert sock.family in (socket.AF_INET, socket.AF_INET6)
    finally:
        sock.close()


def test_mapping_arguments_are_left_alone_but_the_message_is_cleaned() -> None:
    line = logging.LogRecord(
        "uvicorn.error", logging.INFO, __file__, 1, "?token=s3cret %(a)s", ({"a": 1},), None
    )
    RedactToken("s3cret").filter(line)
    assert line.getMessage() == "?token=[redacted] 1"


def test_signals_are_only_captured_in_the_main_thread() -> None:
    from fastapi import FastAPI

    from dsh.web.server import WebServer

    server = WebServer(FastAPI(), WebSettings(token=TOKEN, port=0))
    before = signal.getsignal(signal.SIGTERM)
    entered: list[object] = []

    def in_thread() -> None:
        with server.capture_signals():
            entered.append(signal.getsignal(signal.SIGTERM))

    with server.socket:  # never served, so never closed by the server itself
        worker = threading.Thread(target=in_thread)
        worker.start()
        worker.join(5)
    assert entered == [before]


HOSTILE_TOKENS = ["q'uo\"te %41 & sp-{core}-ü", "emoji😀\\back-{core}"]


@pytest.mark.parametrize("template", HOSTILE_TOKENS)
async def test_no_log_line_of_a_running_server_shows_the_token(
    host: Host,
    backend: StorageDouble,
    settings: WebSettings,
    template: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    core = secrets.token_hex(8)
    token = template.format(core=core)
    live = settings.model_copy(update={"port": 0, "token": token, "access_log": True})
    server = WebServer(create_app(host, live), live)
    base = f"http://127.0.0.1:{server.port}"
    bearer = [(b"authorization", b"Bearer " + token.encode())]
    access = logging.getLogger("uvicorn.access")
    access.addHandler(caplog.handler)  # uvicorn only logs access lines someone handles
    try:
        with caplog.at_level(logging.DEBUG):
            async with anyio.create_task_group() as group:
                group.start_soon(server.run_until_stopped)
                with anyio.fail_after(WAIT):
                    await server.listening.wait()
                async with httpx.AsyncClient(base_url=base, headers=bearer) as http:
                    session = (await http.post("/api/sessions")).json()["session"]["id"]
                    for query in (quote(token, safe=""), quote(token, safe="'&"), token[:-2]):
                        await http.get(f"/api/health?token={query}")
                        await http.get(f"/api/nope/{quote(token, safe='')}")
                    backend.errors["list"] = StorageError(f"disk says {token!r}")
                    assert (await http.get("/api/sessions")).status_code == 503
                    backend.errors["list"] = RuntimeError(f"unexpected {json.dumps(token)}")
                    assert (await http.get("/api/sessions")).status_code == 500
                    del backend.errors["list"]
                    backend.errors["mark"] = StorageError(f"cannot read {token}")
                    assert (await http.get(f"/api/sessions/{session}/events")).status_code == 200
                live_url = f"ws://127.0.0.1:{server.port}/api/sessions/{session}/live"
                async with connect(f"{live_url}?token={quote(token, safe='')}", origin=base):
                    pass
                for wrong in (token[:-1], f"{token}x"):
                    with pytest.raises(InvalidStatus):
                        await connect(f"{live_url}?token={quote(wrong, safe='')}", origin=base)
                server.stop()
    finally:
        access.removeHandler(caplog.handler)
    formatter = logging.Formatter("%(name)s %(message)s")
    lines = [formatter.format(record) for record in caplog.records]
    text = "\n".join(lines)
    assert "uvicorn.access" in text and "WebSocket" in text and "Traceback" in text
    assert "cannot verify stored history" in text and "storage failed" not in text
    for piece in (core, core[:8], core[8:]):
        assert piece not in text, [line for line in lines if piece in line]


async def test_what_any_peer_can_provoke_is_logged_once_per_interval_with_a_count(
    host: Host, settings: WebSettings, caplog: pytest.LogCaptureFixture
) -> None:
    live = settings.model_copy(update={"port": 0, "max_connections": 8, "max_unauthenticated": 2})
    server = WebServer(create_app(host, live), live)
    with caplog.at_level(logging.INFO):
        async with AsyncExitStack() as held, anyio.create_task_group() as group:
            group.start_soon(server.run_until_stopped)
            with anyio.fail_after(WAIT):
                await server.listening.wait()
            for _ in range(40):  # each newcomer evicts the oldest of the two held
                stream = await anyio.connect_tcp("127.0.0.1", server.port)
                await held.enter_async_context(stream)
                await stream.send(b"GET / HTTP/1.1\r\n")
            for _ in range(30):
                async with await anyio.connect_tcp("127.0.0.1", server.port) as stream:
                    await stream.send(b"NOT HTTP AT ALL\r\n\r\n")
                    with anyio.fail_after(WAIT):
                        assert (await stream.receive()).startswith(b"HTTP/1.1 400")
            await wait_until(lambda: server.pool.stats["evicted"] >= 38)
            server.stop()
    connections = [r.getMessage() for r in caplog.records if r.name == "dsh.web.connections"]
    assert connections[0].startswith("connections: 1 evicted; repeats are summarized every 10 s")
    assert len(connections) == 2 and " evicted in the last 10 s" in connections[1]
    counted = int(connections[1].split(": ", 1)[1].split(" ")[0]) + 1
    assert counted == server.pool.stats["evicted"]
    invalid = [r.getMessage() for r in caplog.records if "Invalid HTTP request" in r.getMessage()]
    assert invalid == [
        "Invalid HTTP request received.",
        "29 more lines like 'Invalid HTTP request received.' were not logged",
    ]
