"""Running the web app under uvicorn, programmatically (the server boundary).

`WebServer` binds its socket itself, so the real port is known before the
server starts even when port 0 asked for a free one, and the URL printed with
the token shows that port. It announces once the server is listening.
SIGINT and SIGTERM (in the main thread) start a graceful shutdown: uvicorn
stops accepting, closes WebSockets (1012) and open connections within
`close_timeout`, then runs the app's lifespan shutdown, which for `dsh web`
closes the Host: every agent closed, every live Session flushed. The signal
is not re-raised afterwards, so `dsh web` exits 0 after a clean stop.

uvicorn's access log is off, and a filter redacts `token=` values from its
other log lines (it logs WebSocket paths with their query string): the token
never reaches a log.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import signal
import socket
import threading
from collections.abc import Callable, Generator
from types import FrameType
from typing import TextIO
from urllib.parse import quote

import anyio
import uvicorn
from fastapi import FastAPI
from uvicorn.config import LOGGING_CONFIG

from ..host import Host
from .app import build_web_app
from .settings import WebSettings

__all__ = [
    "QuietRefusedHandshakes",
    "RedactToken",
    "WebServer",
    "WebStartupError",
    "public_url",
    "serve",
]

UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")
_TOKEN_PARAM = re.compile(r"(token=)[^&\s\"']*")


class WebStartupError(RuntimeError):
    """The app's lifespan failed to start (the Host could not be entered)."""


class RedactToken(logging.Filter):
    """Replace every `token=...` value (and the token itself) in a log record."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self._token = token

    def _clean(self, text: str) -> str:
        return _TOKEN_PARAM.sub(r"\1[redacted]", text).replace(self._token, "[redacted]")

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self._clean(str(record.msg))
        if isinstance(record.args, tuple):
            record.args = tuple(
                self._clean(arg) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


class QuietRefusedHandshakes(logging.Filter):
    """Drop uvicorn's ERROR for a WebSocket refused with an HTTP response.

    Every refusal (401, 403, 404, 421) is answered through the ASGI
    `websocket.http.response` extension, after which uvicorn still logs
    "ASGI callable returned without completing handshake." at ERROR: anyone
    could fill the error log at will. The refusal itself is logged at INFO.
    """

    MESSAGE = "ASGI callable returned without completing handshake."

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != self.MESSAGE


def display_host(host: str) -> str:
    """The host part of a URL that reaches a server bound to `host`."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def public_url(host: str, port: int, token: str) -> str:
    """`http://HOST:PORT/?token=TOKEN`: the page URL that carries the access token."""
    return f"http://{display_host(host)}:{port}/?token={quote(token, safe='')}"


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound TCP socket for `host:port` (port 0: a free one). Raises `OSError`."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except BaseException:
        sock.close()
        raise
    return sock


class WebServer(uvicorn.Server):
    """uvicorn serving one app on a socket it bound itself (see the module docstring).

    `run()` serves until `stop()` (or a signal); `started` is set once it
    listens. Set `configure_logging` to let uvicorn install its log handlers
    (the command line does; tests leave logging alone).
    """

    def __init__(
        self,
        app: FastAPI,
        settings: WebSettings,
        *,
        on_listening: Callable[[str], None] | None = None,
        configure_logging: bool = False,
    ) -> None:
        self.socket = listening_socket(settings.host, settings.port)
        self.port: int = self.socket.getsockname()[1]
        self.url = public_url(settings.host, self.port, settings.token)
        self.app = app
        self._on_listening = on_listening
        self._filters: tuple[logging.Filter, ...] = (
            RedactToken(settings.token),
            QuietRefusedHandshakes(),
        )
        self.listening = anyio.Event()
        self.signalled: list[int] = []
        config = uvicorn.Config(
            app,
            lifespan="on",
            access_log=False,
            proxy_headers=False,
            server_header=False,
            ws="websockets-sansio",
            ws_max_size=settings.max_body_bytes,
            timeout_graceful_shutdown=max(1, math.ceil(settings.close_timeout)),
            log_config=LOGGING_CONFIG if configure_logging else None,
        )
        super().__init__(config)

    async def run_until_stopped(self) -> None:
        """Serve until stopped; raises `WebStartupError` if the app failed to start."""
        loggers = [logging.getLogger(name) for name in UVICORN_LOGGERS]
        for logger in loggers:
            for log_filter in self._filters:
                logger.addFilter(log_filter)
        try:
            await self.serve(sockets=[self.socket])
        except SystemExit as exit_:
            # uvicorn exits the process when the lifespan fails; turn that into an error.
            error = getattr(self.app.state, "startup_error", None)
            reason = "the web host failed to start" + (f": {error}" if error else "")
            raise WebStartupError(reason) from (error or exit_)
        finally:
            for logger in loggers:
                for log_filter in self._filters:
                    logger.removeFilter(log_filter)
            self.socket.close()

    def stop(self) -> None:
        """Begin a graceful shutdown."""
        self.should_exit = True

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)  # raises or exits unless now listening
        self.listening.set()
        if self._on_listening is not None:
            self._on_listening(self.url)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        # uvicorn's version re-raises the signal after shutting down, which
        # would kill the process (SIGTERM) or raise KeyboardInterrupt (SIGINT)
        # after a clean stop. Ours only records it.
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.signalled.append(sig)
        super().handle_exit(sig, frame)


async def serve(settings: WebSettings, make_host: Callable[[], Host], *, stdout: TextIO) -> None:
    """Run `dsh web`: serve a Host built by `make_host` until SIGINT/SIGTERM.

    Prints `dsh web: <url with token>` to `stdout` once listening. Raises
    `OSError` if the address cannot be bound and `WebStartupError` if the
    Host cannot start.
    """

    def announce(url: str) -> None:
        stdout.write(f"dsh web: {url}\n")
        stdout.flush()

    app = build_web_app(make_host, settings)
    server = WebServer(app, settings, on_listening=announce, configure_logging=True)
    await server.run_until_stopped()
