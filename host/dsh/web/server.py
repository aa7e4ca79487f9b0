"""Running the web app under uvicorn, programmatically (the server boundary).

`WebServer` binds its socket itself, so the real port is known before the
server starts even when port 0 asked for a free one, and the URL printed with
the token shows that port. It announces once the server is listening.
SIGINT and SIGTERM (in the main thread) start a graceful shutdown: uvicorn
stops accepting, closes WebSockets (1012) and open connections within
`close_timeout`, then runs the app's lifespan shutdown, which for `dsh web`
closes the Host: every agent closed, every live Session flushed. The signal
is not re-raised afterwards, so `dsh web` exits 0 after a clean stop.

**Bounded connections** (`dsh.web.connections`). What uvicorn 0.54 offers
and why it is not enough: `timeout_keep_alive` (5 s) only starts after a
response, so a connection that never finishes its headers is held forever;
`limit_concurrency` answers 503 only *after* a request's headers are parsed,
and counts the held connections, so under a slowloris it would refuse the
authorized clients, not the attacker; `h11_max_incomplete_event_size`
(16 KiB, kept) bounds the size of a head, not its time; `backlog` is the
kernel's queue. So `WebServer` keeps uvicorn's protocols and app handling
but owns the two things around them:

- the accept loop (`connections.Acceptor`) on the socket it bound, with a
  pool of tickets (`connections.ConnectionPool`): at most
  `max_connections` connections (default 1,024) and `max_unauthenticated`
  (default 128) not yet showing the token, both capped by the descriptor
  limit (connections get at most half of `ulimit -n`, unauthenticated ones
  half of that). A full pool evicts an unauthenticated connection — one
  partway through a request first (what slowloris holds), then a quiet one
  (nothing of a request sent yet), the oldest of its kind; only a pool full
  of authenticated ones refuses (503 `server_busy`).
  Running out of descriptors evicts, or refuses through a spare
  descriptor, and never logs more than one line per 10 s;
- the HTTP protocol (`connections.GuardedHttp`, uvicorn's h11 protocol plus
  deadlines): `header_timeout` (default 10 s) for a request line and
  headers, `body_timeout` (default 30 s) for a body. WebSockets, once
  upgraded, have no deadline of ours.

Why these numbers: a browser, `curl` or a script sends its whole head in
its first packet, so 10 s is generous even on a bad link, and still short
enough that an attacker must keep re-opening; 30 s carries a 1 MiB body
(the body limit) at ~35 kB/s; a personal host with a few tabs needs tens of
connections (a tab: up to six HTTP/1.1 connections and one WebSocket), and
static files are fetched without the token, so 128 unauthenticated is
plenty; half the descriptors leaves the other half for Session logs (at
most 256 open, `JsonlBackend`'s `max_open_logs`), the lock and model
connections.

Measured on the project's 2-core machine, `dsh web` under a 1,024-descriptor
limit with 1,100 slowloris connections held (the attacker re-opening every
connection the server closes): before, the host answered nothing and wrote
about 5 MB/s of log at 75% of a core; now `/api/health` answers a fresh
authorized connection every time (see the README's reliability table for
the latencies) and the log gets one summary line per 10 s. A held
connection costs about 12 kB (900 authenticated keep-alive connections
added 11 MB of RSS), so the default cap of 1,024 is about 12 MB.

**The token never reaches a log**: while serving, every log record of the
process is cleaned by `redact.redacted_logs` (every spelling of the token,
every `token=` value, every bearer credential). uvicorn's access log is off
unless `access_log` is set. Lines that any peer can provoke at will (a
malformed request, a refused WebSocket) are written at most once per 10 s
per kind, with a count (`connections.QuietRepeats`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import math
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

from ..host.errors import HostError
from ..host.host import Host
from ..models.errors import ModelChoiceError
from ..persistence.errors import StorageError
from ..plugins.errors import PluginError
from .app import build_web_app
from .connections import (
    Acceptor,
    ConnectionLimits,
    ConnectionPool,
    Deadlines,
    GuardedHttp,
    LogSummary,
    QuietRepeats,
    Ticket,
)
from .errors import ListenError, WebStartupError
from .guards import AccessPolicy
from .logs import uvicorn_log_config
from .redact import RedactToken, redacted_logs
from .settings import WebSettings

__all__ = [
    "QuietExpectedStartupFailure",
    "QuietRefusedHandshakes",
    "RedactToken",
    "WebServer",
    "base_url",
    "public_url",
    "serve",
]

UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")
# uvicorn's lines that any peer can provoke, one per connection (`QuietRepeats`).
PEER_TRIGGERED = (
    "Invalid HTTP request received.",
    "Unsupported upgrade request.",
    '%s - "WebSocket %s" %d',
    '%s - "WebSocket %s" 403',
)
CONNECTIONS_LOG = "dsh.web.connections"
# Start-up failures a person can act on: `dsh web` names them in one line (see
# `QuietExpectedStartupFailure`).
EXPECTED_STARTUP_ERRORS = (PluginError, StorageError, HostError, ModelChoiceError)
# How many connections one readable event of the listening socket may admit, as a
# fraction of the unauthenticated cap (see `connections.pool`: against connections
# that send nothing, a newcomer must be read before that many newer ones arrive).
BATCH_SHARE = 8


def _call_later(delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
    return asyncio.get_running_loop().call_later(delay, callback)


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


class QuietExpectedStartupFailure(logging.Filter):
    """Drop uvicorn's traceback of a start-up failure dsh reports in one line itself.

    When the Host cannot start for a reason a person can act on (a plugin
    that fails to load, storage that refuses; `EXPECTED_STARTUP_ERRORS`),
    `dsh web` exits with one `dsh: error:` line naming it, so uvicorn's
    copy of the traceback (and its "Application startup failed" line) would
    only bury that line. Any other failure is a bug and keeps its traceback.
    """

    STARTUP_FAILED = "Application startup failed. Exiting."

    def __init__(self, app: FastAPI) -> None:
        super().__init__()
        self._app = app

    def filter(self, record: logging.LogRecord) -> bool:
        error = getattr(self._app.state, "startup_error", None)
        if not isinstance(error, EXPECTED_STARTUP_ERRORS):
            return True
        message = record.getMessage()
        return not (message.startswith("Traceback") or message == self.STARTUP_FAILED)


def display_host(host: str) -> str:
    """The host part of a URL that reaches a server bound to `host`."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def base_url(host: str, port: int) -> str:
    """`http://HOST:PORT/`: the server's address, without the token."""
    return f"http://{display_host(host)}:{port}/"


def public_url(host: str, port: int, token: str) -> str:
    """`http://HOST:PORT/?token=TOKEN`: the page URL that carries the access token."""
    return f"{base_url(host, port)}?token={quote(token, safe='')}"


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound TCP socket for `host:port` (port 0: a free one). Raises `ListenError`
    (chaining the `OSError`) naming the address and the option that fixes it."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except OSError as error:
        raise ListenError(
            f"cannot listen on --host {host!r}: {error.strerror or error}; "
            "use an address of this machine such as 127.0.0.1 (the default)"
        ) from error
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as error:
        sock.close()
        raise ListenError(_bind_problem(error, host, port)) from error
    except BaseException:
        sock.close()
        raise
    return sock


def _bind_problem(error: OSError, host: str, port: int) -> str:
    where = f"{display_host(host)}:{port}"
    if error.errno == errno.EADDRINUSE:
        return (
            f"port {port} is already in use on {display_host(host)} (another dsh web, or "
            "another program); choose another with --port N, or --port 0 for a free one"
        )
    if error.errno == errno.EACCES:
        return (
            f"no permission to listen on {where} (ports below 1024 need privileges); "
            "choose a port above 1023 with --port N"
        )
    if error.errno == errno.EADDRNOTAVAIL:
        return (
            f"cannot listen on {display_host(host)}: it is not an address of this machine; "
            "use --host 127.0.0.1 (the default) or one of this machine's addresses"
        )
    return f"cannot listen on {where}: {error.strerror or error}"


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
        descriptors: int | None = None,
    ) -> None:
        self.socket = listening_socket(settings.host, settings.port)
        self.port: int = self.socket.getsockname()[1]
        self.url = public_url(settings.host, self.port, settings.token)
        self.app = app
        self._token = settings.token
        self._on_listening = on_listening
        self._quiet = QuietRepeats(PEER_TRIGGERED)
        self._filters: tuple[logging.Filter, ...] = (
            QuietRefusedHandshakes(),
            QuietExpectedStartupFailure(app),
            self._quiet,
        )
        self.listening = anyio.Event()
        self.signalled: list[int] = []
        self.limits = ConnectionLimits.for_process(
            settings.max_connections, settings.max_unauthenticated, descriptors
        )
        self._summary = LogSummary(
            logging.getLogger(CONNECTIONS_LOG),
            "connections",
            _call_later,
            describe=self._describe_pool,
            quiet=("head_timeout", "body_timeout"),
        )
        self.pool = ConnectionPool(self.limits, on_event=self._summary.note)
        self._deadlines = Deadlines(header=settings.header_timeout, body=settings.body_timeout)
        self._policy = AccessPolicy(settings)
        config = uvicorn.Config(
            app,
            lifespan="on",
            http="h11",
            access_log=settings.access_log,
            # X-Forwarded-* only from the proxies the operator named (none by default).
            proxy_headers=bool(settings.trusted_proxies),
            forwarded_allow_ips=list(settings.trusted_proxies),
            server_header=False,
            ws="websockets-sansio",
            ws_max_size=settings.max_body_bytes,
            timeout_graceful_shutdown=max(1, math.ceil(settings.close_timeout)),
            log_config=uvicorn_log_config(settings.log_format) if configure_logging else None,
        )
        super().__init__(config)
        self._acceptor = Acceptor(
            self.socket,
            self.pool,
            self._protocol_for,
            backlog=config.backlog,
            batch=max(1, self.limits.unauthenticated // BATCH_SHARE),
        )

    async def run_until_stopped(self) -> None:
        """Serve until stopped; raises `WebStartupError` if the app failed to start."""
        loggers = [logging.getLogger(name) for name in UVICORN_LOGGERS]
        for logger in loggers:
            for log_filter in self._filters:
                logger.addFilter(log_filter)
        try:
            with redacted_logs(self._token):
                try:
                    await self.serve(sockets=[self.socket])
                finally:
                    self._settle()
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
        # uvicorn runs the lifespan and would create an asyncio server on `sockets`;
        # given none, it only runs the lifespan (or exits if that fails), and the
        # accept loop is ours (see the module docstring).
        await super().startup(sockets=[])
        self._acceptor.start()
        self.listening.set()
        if self._on_listening is not None:
            self._on_listening(self.url)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._acceptor.close()  # first: no new connections while the others finish
        await super().shutdown(sockets=sockets)
        await self._acceptor.wait_closed()

    def _settle(self) -> None:
        """After serving (or failing to start): stop accepting, write the pending counts."""
        self._acceptor.close()
        self._summary.close()
        for template, count in self._quiet.dropped().items():
            logging.getLogger("uvicorn.error").info(
                "%d more lines like %r were not logged", count, template
            )

    def _protocol_for(self, ticket: Ticket) -> asyncio.Protocol:
        return GuardedHttp(
            self.config,
            self.server_state,
            self.lifespan.state,
            ticket=ticket,
            deadlines=self._deadlines,
            policy=self._policy,
        )

    def _describe_pool(self) -> str:
        return (
            f"{self.pool.held} held, {self.pool.unauthenticated} unauthenticated "
            f"({self.pool.partway} partway through a request); "
            f"limits {self.limits.total} and {self.limits.unauthenticated}"
        )

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


async def serve(
    settings: WebSettings,
    make_host: Callable[[], Host],
    *,
    stdout: TextIO,
    on_listening: Callable[[str], None] | None = None,
) -> None:
    """Run `dsh web`: serve a Host built by `make_host` until SIGINT/SIGTERM.

    Prints `dsh web: <url with token>` to `stdout` once listening (after an
    empty line, so it stands out below the start-up log); just before, calls
    `on_listening` with the address without the token (`base_url`). Raises
    `OSError` if the address cannot be bound and `WebStartupError` if the
    Host cannot start.
    """

    def announce(url: str) -> None:
        if on_listening is not None:
            on_listening(base_url(settings.host, server.port))
        # Last, after uvicorn's start-up lines, and set apart: the line to open.
        stdout.write(f"\ndsh web: {url}\n")
        stdout.flush()

    app = build_web_app(make_host, settings)
    server = WebServer(app, settings, on_listening=announce, configure_logging=True)
    await server.run_until_stopped()
