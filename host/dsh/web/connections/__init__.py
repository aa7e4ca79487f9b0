"""Bounded connections for the web server (the server boundary; see `dsh.web.server`).

Modules, one idea each:

- `pool`: which connections are held, the two caps, and which one is
  evicted first (`ConnectionPool`, `Ticket`, `ConnectionLimits`);
- `protocol`: uvicorn's h11 protocol with read deadlines and the token
  check that authenticates a ticket (`GuardedHttp`);
- `acceptor`: the accept loop on the server's own socket, refusals and
  descriptor exhaustion (`Acceptor`);
- `ratelog`: at most one log line per interval for what peers can provoke
  (`LogSummary`, `QuietRepeats`).
"""

from __future__ import annotations

from .acceptor import BUSY_RESPONSE, Acceptor
from .pool import ConnectionLimits, ConnectionPool, Ticket, descriptor_limit
from .protocol import Deadlines, GuardedHttp, Relay
from .ratelog import LogSummary, QuietRepeats

__all__ = [
    "BUSY_RESPONSE",
    "Acceptor",
    "ConnectionLimits",
    "ConnectionPool",
    "Deadlines",
    "GuardedHttp",
    "LogSummary",
    "QuietRepeats",
    "Relay",
    "Ticket",
    "descriptor_limit",
]
