from __future__ import annotations

import io
import logging
import signal
import socket
import threading
from pathlib import Path

import anyio
import httpx
import pytest

from dsh.host import Host
from dsh.models import DemoModel
from dsh.persistence import MemoryBackend
from dsh.web import WebSettings, serve
from dsh.web.server import RedactToken, display_host, listening_socket, public_url

from .conftest import TOKEN, wait_until

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


def test_a_busy_port_is_an_os_error() -> None:
    taken = listening_socket("127.0.0.1", 0)
    taken.listen()
    try:
        with pytest.raises(OSError):
            listening_socket("127.0.0.1", taken.getsockname()[1])
    finally:
        taken.close()


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
            line = stdout.getvalue()
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

    worker = threading.Thread(target=in_thread)
    worker.start()
    worker.join(5)
    assert entered == [before]
    server.socket.close()
