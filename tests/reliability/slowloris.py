"""A slowloris attacker, and what it takes to run `dsh web` under a low descriptor limit.

`Slowloris(port, count)` holds `count` connections that never finish their
request head: each sends a partial head, then one more header line every
`trickle` seconds, and every connection the server closes (evicted, timed
out or refused) is opened again, up to `reopen_rate` a second — an attacker
who keeps `count` connections pointed at the server for as long as it runs.
It runs in a thread and counts what happened (`opened`, `closed_by_server`,
`refused`: closes that came with a 503).

`limited_dsh(limit)` is a `WebHost.dsh` command prefix that starts
`python -m dsh.cli` with `RLIMIT_NOFILE` (soft and hard) set to `limit`, as
`ulimit -n` would.
"""

from __future__ import annotations

import contextlib
import resource
import selectors
import socket
import sys
import threading
import time
from dataclasses import dataclass, field

__all__ = ["Probe", "Slowloris", "limited_dsh", "raise_own_descriptor_limit"]

PARTIAL_HEAD = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris\r\n"
TRICKLE = b"X-Slow: 1\r\n"

_LAUNCH = (
    "import resource, runpy, sys\n"
    "limit = int(sys.argv[1])\n"
    "resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))\n"
    "sys.argv = ['dsh', *sys.argv[2:]]\n"
    "runpy.run_module('dsh.cli', run_name='__main__', alter_sys=True)\n"
)


def limited_dsh(limit: int) -> list[str]:
    """The command prefix of a `dsh` whose descriptor limit is `limit`."""
    return [sys.executable, "-c", _LAUNCH, str(limit)]


def raise_own_descriptor_limit(needed: int) -> int:
    """Raise this process's soft descriptor limit towards `needed`; the limit it now has."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return needed if soft == resource.RLIM_INFINITY else soft


@dataclass
class Slowloris:
    port: int
    count: int
    trickle: float = 1.0
    reopen_rate: float = 1000.0
    opened: int = 0
    closed_by_server: int = 0
    refused: int = 0
    connect_failures: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _ready: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Slowloris:
        self._thread = threading.Thread(target=self._run, name="slowloris", daemon=True)
        self._thread.start()
        if not self._ready.wait(60):
            self.__exit__()  # no `with` body will run: stop, and close what it opened
            raise TimeoutError("the attacker could not open its connections")
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(30)
        if self._thread.is_alive():
            raise TimeoutError("the attacker did not stop (and close its sockets) within 30 s")

    def _open(self, selector: selectors.BaseSelector) -> bool:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.settimeout(5)
            sock.connect(("127.0.0.1", self.port))
            sock.sendall(PARTIAL_HEAD)
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        except OSError:
            sock.close()
            self.connect_failures += 1
            return False
        self.opened += 1
        return True

    def _closed(self, selector: selectors.BaseSelector, sock: socket.socket) -> None:
        try:
            selector.unregister(sock)
        finally:
            sock.close()
        self.closed_by_server += 1

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        try:
            for _ in range(self.count):
                if self._stop.is_set():
                    return
                self._open(selector)
            self._ready.set()
            self._attack(selector)
        finally:
            for key in list(selector.get_map().values()):
                with contextlib.suppress(OSError):
                    key.fileobj.close()  # type: ignore[union-attr]
            selector.close()
            self._ready.set()

    def _attack(self, selector: selectors.BaseSelector) -> None:
        next_trickle = time.monotonic() + self.trickle
        budget, last = 0.0, time.monotonic()
        while not self._stop.is_set():
            for key, _ in selector.select(timeout=0.05):
                sock: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    data = sock.recv(4096)
                except OSError:
                    data = b""
                if data.startswith(b"HTTP/1.1 503"):
                    self.refused += 1
                self._closed(selector, sock)
            now = time.monotonic()
            budget = min(self.reopen_rate, budget + (now - last) * self.reopen_rate)
            last = now
            while len(selector.get_map()) < self.count and budget >= 1:
                budget -= 1
                self._open(selector)
            if now >= next_trickle:
                next_trickle = now + self.trickle
                for key in list(selector.get_map().values()):
                    sock = key.fileobj  # type: ignore[assignment]
                    try:
                        sock.send(TRICKLE)
                    except OSError:
                        self._closed(selector, sock)


@dataclass
class Probe:
    """Latencies (seconds) and statuses of requests made on fresh connections."""

    statuses: list[int | str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    def ok(self) -> int:
        return sum(status == 200 for status in self.statuses)

    def median_ms(self) -> float:
        ordered = sorted(self.latencies)
        return round(ordered[len(ordered) // 2] * 1000, 1) if ordered else 0.0

    def max_ms(self) -> float:
        return round(max(self.latencies, default=0.0) * 1000, 1)
