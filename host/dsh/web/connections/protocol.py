"""uvicorn's HTTP/1.1 protocol with read deadlines and a place in the connection pool.

uvicorn (0.54, h11) arms no timer while it waits for a request: a
connection that never finishes its headers, or its body, is held forever
(its `timeout_keep_alive` starts only after a response). `GuardedHttp` adds
the deadlines, reading the parser's state (h11's `their_state`, through
`h11_state`, the one place that reads uvicorn's internals) after every event:

- **head**: the client owes a request line and headers (`IDLE`). The
  deadline is `header_timeout` from the connection's start, or from the end
  of the previous response on a kept-alive connection. Bytes that trickle in
  do not extend it (that is what slowloris does).
- **body**: the headers are in and the body is not (`SEND_BODY`): the
  deadline is `body_timeout` from the end of the headers.
- otherwise the server owes the response: no deadline of ours.

A connection past its deadline is closed and counted (`head_timeout`,
`body_timeout`). The same reading tells the `Ticket` what the connection is
doing, which decides the pool's eviction order: *answering* (a response is
owed), *partway* (part of a head is buffered, or a body is owed) or *quiet*
(nothing of a request has arrived). When a request's headers are complete the protocol checks
whether they present the access token (the `Authorization: Bearer` header
or the `token` query parameter, compared in constant time by the same
`AccessPolicy` the app uses) and, if so, authenticates its `Ticket`: the
pool never evicts it. The app still judges every request itself.

A WebSocket upgrade hands the transport to uvicorn's WebSocket protocol;
`GuardedHttp` disarms its deadline (a live stream is long-lived by design:
only the app and the WebSocket pings end it) and puts a `Relay` in front
of the new protocol, so the ticket is released when that connection
closes too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import h11
from starlette.datastructures import Headers
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from ..guards import AccessPolicy, presented_token
from . import h11_state
from .pool import Ticket

__all__ = ["Deadlines", "GuardedHttp", "Relay"]

WEBSOCKET = "websocket"


@dataclass(frozen=True, slots=True)
class Deadlines:
    """How long a client may take to send its request (seconds)."""

    header: float
    body: float


class Relay(asyncio.Protocol):
    """Forwards a transport's events to `inner`, and tells `on_lost` when it closes."""

    def __init__(self, inner: asyncio.Protocol, on_lost: Callable[[], None]) -> None:
        self.inner = inner
        self._on_lost = on_lost

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            self.inner.connection_lost(exc)
        finally:
            self._on_lost()


class GuardedHttp(H11Protocol):
    """`H11Protocol` plus deadlines and a pool ticket (see the module docstring)."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        *,
        ticket: Ticket,
        deadlines: Deadlines,
        policy: AccessPolicy,
    ) -> None:
        super().__init__(config, server_state, app_state)
        self.ticket = ticket
        self._deadlines = deadlines
        self._policy = policy
        self._phase: str | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._checked: object = None

    # -- the transport's events ------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        h11_state.check(self)
        self._watch()
        self.ticket.attach(transport.abort)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.ticket.release()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self._disarm()
        self._phase = WEBSOCKET
        self._check_token()
        self.ticket.answering(True)
        super().handle_websocket_upgrade(event)
        upgraded = self.transport.get_protocol()
        assert isinstance(upgraded, asyncio.Protocol)  # uvicorn's WebSocket protocols are
        self.transport.set_protocol(Relay(upgraded, self.ticket.release))

    # -- deadlines and the token -----------------------------------------

    def _watch(self) -> None:
        """Arm, keep or drop the deadline for what the client owes now; check new requests."""
        if self._phase == WEBSOCKET:
            return  # upgraded: this protocol no longer reads the connection
        self._check_token()
        if self.transport.is_closing():
            self._disarm()
            return
        phase = h11_state.phase(self)
        self.ticket.answering(phase is None)
        # Partway: a body is owed, or part of the next head is buffered (the pool evicts
        # those first; a connection with nothing of a request in yet is quiet).
        started = phase == "head" and h11_state.head_started(self)
        self.ticket.receiving(phase == "body" or started)
        if phase == self._phase:
            return
        self._disarm()
        self._phase = phase
        if phase is not None:
            delay = self._deadlines.header if phase == "head" else self._deadlines.body
            self._timer = self.loop.call_later(delay, self._expire, phase)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._phase = None

    def _expire(self, phase: str) -> None:
        self._timer = None
        self.ticket.note(f"{phase}_timeout")
        self.transport.abort()

    def _check_token(self) -> None:
        scope = h11_state.request_scope(self)
        if scope is None or scope is self._checked or self.ticket.authenticated:
            return
        self._checked = scope
        presented = presented_token(Headers(raw=list(scope["headers"])), scope["query_string"])
        if self._policy.token_ok(presented):
            self.ticket.authenticate()
