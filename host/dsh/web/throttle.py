"""Failed authentication, throttled per client address and logged in summaries (DESIGN §9).

Before this, a client could offer wrong tokens as fast as the server
answered, and nothing was logged. Rules:

1. **A failure** is a request that needs the token (`/api`, every
   WebSocket) and does not present the right one. It counts against its
   client's address: the connection's peer address, with an IPv6 address
   counted by its /64 network (one client usually holds a whole /64). Behind
   a reverse proxy every client shares the proxy's address.
2. **Throttled.** Once an address has `limit` failures (20) within `window`
   seconds (60) of its first, every request from it that needs the token is
   answered 429 `too_many_failures` with `Retry-After` until that window
   ends — *without comparing its token*, so guessing goes no faster than
   `limit` tokens per `window`, whatever the answer rate. A 429 is not a
   failure: the window ends on time. Other addresses are unaffected, and so
   are the static files. The price: a client sharing the address (another
   user of the same machine, on loopback) can hold the address's requests
   back for at most one window.
3. **Bounded memory.** At most `capacity` (4,096) addresses are tracked; a
   new one evicts the one whose window started first.
4. **Logged in summaries, never the token**: the first event after a quiet
   interval is one warning line at once, then at most one line per 10 s
   with the counts (`ratelog.LogSummary`) and the addresses throttled at
   that moment.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from .connections.ratelog import Cancellable, LogSummary, Schedule
from .settings import AUTH_FAILURES, AUTH_WINDOW

__all__ = ["CAPACITY", "AuthThrottle", "client_key"]

log = logging.getLogger(__name__)

CAPACITY = 4096
SHOWN = 3  # addresses a summary line names; the rest are counted
REFUSED = "refused (401)"
THROTTLED = "throttled (429)"
BLOCKED = "address(es) throttled"


def client_key(address: str | None) -> str:
    """What failures of `address` count against: itself, its /64 for IPv6, `unknown` for None."""
    if address is None:
        return "unknown"
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address  # not an IP (a test client's name, a Unix socket's path)
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:  # ::ffff:a.b.c.d is a.b.c.d
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


@dataclass(slots=True)
class _Window:
    started: float
    failures: int = 0


def _call_later(delay: float, callback: Callable[[], None]) -> Cancellable:
    # The guard runs on the server's event loop; its summaries' timers do too.
    return asyncio.get_running_loop().call_later(delay, callback)


class AuthThrottle:
    """Counts failed authentication per address and says when an address must wait."""

    def __init__(
        self,
        *,
        limit: int = AUTH_FAILURES,
        window: float = AUTH_WINDOW,
        capacity: int = CAPACITY,
        clock: Callable[[], float] = time.monotonic,
        schedule: Schedule = _call_later,
    ) -> None:
        self._limit = limit
        self._window = window
        self._capacity = capacity
        self._clock = clock
        self._windows: OrderedDict[str, _Window] = OrderedDict()  # oldest window first
        self._summary = LogSummary(log, "failed authentication", schedule, describe=self._describe)

    def retry_after(self, address: str | None) -> int | None:
        """Whole seconds (at least 1) until `address` may present a token again, counting
        the 429 this answers; None when it may now."""
        key = client_key(address)
        window = self._current(key)
        if window is None or window.failures < self._limit:
            return None
        self._summary.note(THROTTLED)
        return max(1, math.ceil(window.started + self._window - self._clock()))

    def failed(self, address: str | None) -> None:
        """Count one failed authentication of `address`."""
        key = client_key(address)
        window = self._current(key)
        if window is None:
            window = self._windows[key] = _Window(self._clock())
            while len(self._windows) > self._capacity:
                self._windows.popitem(last=False)
        window.failures += 1
        self._summary.note(REFUSED)
        if window.failures == self._limit:
            self._summary.note(BLOCKED)

    def close(self) -> None:
        """Write the counts still pending (the app's shutdown)."""
        self._summary.close()

    def tracked(self) -> int:
        """How many addresses are tracked now (bounded by `capacity`)."""
        return len(self._windows)

    def _current(self, key: str) -> _Window | None:
        window = self._windows.get(key)
        if window is not None and self._clock() - window.started >= self._window:
            del self._windows[key]
            return None
        return window

    def _describe(self) -> str:
        now = self._clock()
        blocked = [
            key
            for key, window in self._windows.items()
            if window.failures >= self._limit and now - window.started < self._window
        ]
        if not blocked:
            return "no address throttled now"
        more = f" and {len(blocked) - SHOWN} more" if len(blocked) > SHOWN else ""
        return f"throttled now: {', '.join(blocked[:SHOWN])}{more}"
