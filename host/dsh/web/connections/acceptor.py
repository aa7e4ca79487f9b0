"""The web server's accept loop: every connection passes the pool, and running out of file
descriptors refuses connections instead of flooding the log.

asyncio's own accept loop (CPython 3.11) reports every `accept()` that
fails with EMFILE through the loop's exception handler, with a traceback,
and keeps calling `accept()` up to `backlog` times per wake-up: with
1,100 connections held under a 1,024-descriptor limit that was about
5 MB/s of log at 75% of a core, and the host answered nothing. `Acceptor`
owns the listening socket instead:

1. Each time the socket is readable it accepts at most `batch`
   connections, so one turn of the event loop admits few enough
   connections that a newcomer's request is read before the pool could
   evict it even among connections that send nothing (see `pool`).
2. Each connection asks the pool for a ticket. A refused one gets an
   immediate `503 server_busy` (the API's error shape, `Retry-After: 1`)
   and is closed, so a client learns at once that it should retry.
3. When `accept()` fails for lack of descriptors (EMFILE, ENFILE, ENOBUFS,
   ENOMEM), an unauthenticated connection is evicted (in the pool's order:
   partway through a request first, then quiet, oldest first) and the
   freed descriptor takes the next one. With nothing to evict, a spare
   descriptor held for this moment is closed, one waiting connection is
   accepted into it and refused with the 503, and the spare is taken back
   (so waiting clients are told, not left hanging). With no spare either,
   accepting pauses for `RETRY` seconds.
4. Every refusal, eviction and exhaustion is counted by the pool, whose
   events go to a rate-limited log (`ratelog.LogSummary`): at most one
   line per interval, with counts.

This is the server boundary, so it uses asyncio directly (uvicorn's
protocols are asyncio protocols).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import json
import logging
import os
import socket
from collections.abc import Callable

from .pool import ConnectionPool, Ticket

__all__ = ["BUSY_RESPONSE", "RETRY", "Acceptor"]

RETRY = 0.25
DEFAULT_BATCH = 32
RESOURCE_ERRORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
# The peer gave up between its connect and our accept: nothing to do.
PEER_GONE = frozenset({errno.ECONNABORTED, errno.EPROTO, errno.ECONNRESET, errno.EPERM})
DRAIN_BYTES = 65536

log = logging.getLogger(__name__)


def _busy_response() -> bytes:
    body = json.dumps(
        {
            "error": {
                "code": "server_busy",
                "message": "the server holds as many connections as it can; retry shortly",
            }
        }
    ).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Retry-After: 1\r\n"
        "Cache-Control: no-store\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


BUSY_RESPONSE = _busy_response()


def _open_spare() -> int | None:
    try:
        return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


class Acceptor:
    """Accepts connections on `sock` (bound, not yet listening) into `pool`.

    `protocol_for(ticket)` builds the protocol of an admitted connection.
    `start()` begins listening (call it in the serving event loop);
    `close()` stops accepting and cancels connections still being set up;
    `wait_closed()` waits for those to finish.
    """

    def __init__(
        self,
        sock: socket.socket,
        pool: ConnectionPool,
        protocol_for: Callable[[Ticket], asyncio.Protocol],
        *,
        backlog: int,
        batch: int = DEFAULT_BATCH,
    ) -> None:
        self._sock = sock
        self._pool = pool
        self._protocol_for = protocol_for
        self._backlog = backlog
        self._batch = max(1, batch)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._spare: int | None = None
        self._reading = False
        self._retry: asyncio.TimerHandle | None = None
        self._closed = False
        self._setting_up: set[asyncio.Task[object]] = set()

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._sock.setblocking(False)
        self._sock.listen(self._backlog)
        self._spare = _open_spare()
        self._resume()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop_reading()
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        self._release_spare()
        for task in self._setting_up:
            task.cancel()

    async def wait_closed(self) -> None:
        if self._setting_up:
            await asyncio.gather(*self._setting_up, return_exceptions=True)

    # -- accepting -------------------------------------------------------

    def _on_readable(self) -> None:
        for _ in range(self._batch):
            try:
                conn, _ = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                if error.errno in PEER_GONE:
                    continue
                if error.errno in RESOURCE_ERRORS:
                    self._out_of_descriptors()
                else:
                    self._pool.note("accept_failed")
                    self._pause()
                return
            self._admit(conn)

    def _admit(self, conn: socket.socket) -> None:
        ticket = self._pool.admit()
        if ticket is None:
            self._refuse(conn)
            return
        assert self._loop is not None
        conn.setblocking(False)
        task = self._loop.create_task(
            self._loop.connect_accepted_socket(lambda: self._protocol_for(ticket), sock=conn)
        )
        self._setting_up.add(task)
        task.add_done_callback(functools.partial(self._set_up, conn, ticket))

    def _set_up(self, conn: socket.socket, ticket: Ticket, task: asyncio.Task[object]) -> None:
        self._setting_up.discard(task)
        if not task.cancelled() and task.exception() is None:
            return  # the protocol holds the ticket now
        ticket.release()
        conn.close()
        error = None if task.cancelled() else task.exception()
        if error is not None and not isinstance(error, OSError):  # OSError: the peer left
            log.error("setting up an accepted connection failed", exc_info=error)

    @staticmethod
    def _refuse(conn: socket.socket) -> None:
        """Answer 503 and close (reading what already arrived, so the close is not a reset)."""
        try:
            conn.setblocking(False)
            with contextlib.suppress(OSError):
                conn.recv(DRAIN_BYTES)
            conn.send(BUSY_RESPONSE)
        except OSError:
            pass  # the client is gone: nobody to tell
        finally:
            conn.close()

    # -- out of descriptors ----------------------------------------------

    def _out_of_descriptors(self) -> None:
        self._pool.note("descriptors_exhausted")
        if self._pool.evict_one():
            return  # its descriptor is freed before the loop's next turn, which accepts again
        if self._refuse_with_spare():
            return
        self._pause()

    def _refuse_with_spare(self) -> bool:
        """Accept one waiting connection into the spare descriptor and refuse it."""
        if self._spare is None:
            return False
        self._release_spare()
        try:
            conn, _ = self._sock.accept()
        except OSError:
            conn = None  # nobody is waiting any more, or another open took the descriptor
        if conn is not None:
            self._pool.note("refused")
            self._refuse(conn)
        self._spare = _open_spare()
        return conn is not None

    def _release_spare(self) -> None:
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None

    # -- reading the listening socket --------------------------------------

    def _pause(self) -> None:
        assert self._loop is not None
        self._stop_reading()
        self._retry = self._loop.call_later(RETRY, self._resume)

    def _resume(self) -> None:
        assert self._loop is not None
        self._retry = None
        if self._spare is None:
            self._spare = _open_spare()
        self._loop.add_reader(self._sock.fileno(), self._on_readable)
        self._reading = True

    def _stop_reading(self) -> None:
        if self._reading:
            assert self._loop is not None
            self._loop.remove_reader(self._sock.fileno())
            self._reading = False
