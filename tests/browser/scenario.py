"""What the conversation-page scenarios share: a scripted model file, a free
port (for a host that must come back where the page left it), a slow
OpenAI-compatible model server (for a turn that runs until stopped), and the
steps of opening a Session the way a person does.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.support.webhost import WebHost

from .chromium import PageWatch

__all__ = [
    "SlowModel",
    "free_port",
    "new_session",
    "only_network_complaints",
    "send",
    "slow_model",
    "write_script",
]

WAIT_MS = 20_000


def write_script(path: Path, replies: list[dict[str, Any]]) -> Path:
    """A `scripted:` model file with `replies`, used in order."""
    path.write_text(json.dumps(replies), encoding="utf-8")
    return path


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def new_session(page: Page, web: WebHost) -> str:
    """Open the page, click New session, wait for the live stream; returns the id."""
    page.goto(web.page_url)
    page.locator("[data-role=new-session]").click()
    expect(page.locator("[data-role=transcript]")).to_have_attribute("data-status", "live")
    session_id = page.locator("[data-role=session-list] [aria-current=true]").get_attribute(
        "data-session-id"
    )
    assert session_id
    return session_id


def send(page: Page, text: str) -> None:
    """Type `text` in the composer and press Enter."""
    composer = page.locator("[data-role=composer]")
    composer.fill(text)
    composer.press("Enter")
    expect(composer).to_have_value("")


def only_network_complaints(watch: PageWatch) -> list[str]:
    """The page's complaints other than the browser's own notes about a refused connection."""
    expected = ("ERR_CONNECTION_REFUSED", "WebSocket connection to", "Failed to load resource")
    return [problem for problem in watch.problems if not any(mark in problem for mark in expected)]


class SlowModel(ThreadingHTTPServer):
    """A chat-completions server whose answer streams one fragment, then waits.

    It keeps the stream open (with SSE keep-alive comments, so no read
    timeout fires) until `finish()` is called or the client goes away;
    `requests` counts the calls and `disconnected` is set when the adapter
    closed a stream before it finished (a stopped turn).
    """

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _SlowHandler)
        self.requests = 0
        self.released = threading.Event()
        self.disconnected = threading.Event()
        self.first = "Thinking it over"
        self.rest = " — done."

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def finish(self) -> None:
        self.released.set()


class _SlowHandler(BaseHTTPRequestHandler):
    server: SlowModel

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test output is not the place for an access log."""

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.server.requests += 1
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        try:
            self._event({"content": self.server.first})
            # The model's pace, not a test's wait: a keep-alive every 0.3 s.
            while not self.server.released.wait(0.3):
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
            self._event({"content": self.server.rest})
            self._event({}, finish="stop")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.server.disconnected.set()

    def _event(self, delta: dict[str, Any], finish: str | None = None) -> None:
        chunk = {
            "id": "chatcmpl-slow",
            "object": "chat.completion.chunk",
            "model": "slow",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.flush()


@contextmanager
def slow_model() -> Iterator[SlowModel]:
    """A running `SlowModel`; every open stream is released when the block ends."""
    server = SlowModel()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.finish()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
