"""Real local servers the Apprise channel sends to: a JSON webhook and an SMTP server."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller


@dataclass
class Webhook:
    """A `json://127.0.0.1:PORT/hook` receiver; `down` answers 500 that many more times."""

    port: int = 0
    received: list[dict[str, Any]] = field(default_factory=list)
    down: int = 0
    refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.port}/hook"


@contextmanager
def webhook() -> Iterator[Webhook]:
    hook = Webhook()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with hook.lock:
                if hook.down:
                    hook.down -= 1
                    hook.refused += 1
                    status = 500
                else:
                    hook.received.append(json.loads(body))
                    status = 200
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    hook.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@dataclass
class Mailbox:
    port: int = 0
    messages: list[Message] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"mailto://127.0.0.1:{self.port}?from=dsh@example.com&to=me@example.com"


@contextmanager
def smtp() -> Iterator[Mailbox]:
    box = Mailbox()

    class Handler:
        async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:
            box.messages.append(message_from_bytes(envelope.original_content))
            return "250 OK"

    # aiosmtpd checks that it serves by connecting to its port, so it needs a real one.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        box.port = probe.getsockname()[1]
    controller = Controller(Handler(), hostname="127.0.0.1", port=box.port)
    controller.start()
    try:
        yield box
    finally:
        controller.stop()
