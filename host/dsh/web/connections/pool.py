"""Which connections the server holds, and which one it lets go first when it is full.

Every connection the server accepts asks the `ConnectionPool` for a
`Ticket` and gives it back when it closes. The rules:

1. **Every connection starts unauthenticated.** It becomes authenticated
   when one of its requests presents the access token (the protocol checks,
   in constant time); it stays authenticated until it closes.
2. **Two caps.** At most `limits.total` connections are held, and at most
   `limits.unauthenticated` of them unauthenticated.
3. **A full pool makes room by evicting the oldest unauthenticated
   connection**, preferring one that is not being answered (waiting for, or
   dribbling, a request) over one whose response is in flight. Authenticated
   connections, WebSockets included, are never evicted.
4. **Only when nothing can be evicted is the newcomer refused.**

Why evict rather than refuse: a slowloris attacker who holds every
unauthenticated slot would otherwise lock out every newcomer, and a newcomer
cannot show its token before it is admitted. Evicting the oldest means an
attacker's connections churn among themselves, while a client that sends its
request promptly (a browser, `curl`, a script: the token arrives in the first
packet) is authenticated long before the attacker can open
`limits.unauthenticated` newer connections to push it out. The acceptor
bounds how many connections it takes per event-loop turn for that reason.

The pool only counts and chooses; closing a connection is the `closer` the
protocol attaches to its ticket. It keeps counters of what happened
(`stats`) and reports each event to `on_event` (the rate-limited log).
"""

from __future__ import annotations

import resource
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ConnectionLimits", "ConnectionPool", "Ticket", "descriptor_limit"]

# A descriptor limit this large is as good as none (RLIM_INFINITY, or a huge hard limit).
UNLIMITED = 1 << 20


def descriptor_limit() -> int:
    """This process's soft limit on open file descriptors (`ulimit -n`)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return UNLIMITED if soft == resource.RLIM_INFINITY else min(soft, UNLIMITED)


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The two caps of a pool: all connections, and unauthenticated ones."""

    total: int
    unauthenticated: int

    def __post_init__(self) -> None:
        if not 1 <= self.unauthenticated < self.total:
            raise ValueError(
                f"connection limits need 1 <= unauthenticated ({self.unauthenticated}) "
                f"< total ({self.total})"
            )

    @classmethod
    def for_process(
        cls, max_connections: int, max_unauthenticated: int, descriptors: int | None = None
    ) -> ConnectionLimits:
        """The caps a server with `descriptors` file descriptors can keep.

        Connections get at most half of the descriptors (the other half is for
        Session logs, the lock, model connections and the interpreter), and
        unauthenticated ones at most half of the connections, so an attacker
        can never occupy every slot an authorized client needs.
        """
        budget = descriptor_limit() if descriptors is None else descriptors
        total = max(2, min(max_connections, budget // 2))
        unauthenticated = max(1, min(max_unauthenticated, total // 2))
        return cls(total=total, unauthenticated=unauthenticated)


class Ticket:
    """One admitted connection's place in the pool."""

    __slots__ = ("_closer", "_pool", "authenticated", "busy", "evicted", "released")

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool
        self._closer: Callable[[], None] | None = None
        self.authenticated = False
        self.busy = False
        self.evicted = False
        self.released = False

    def attach(self, closer: Callable[[], None]) -> None:
        """Give the pool a way to close this connection (closes it now if already evicted)."""
        self._closer = closer
        if self.evicted:
            closer()

    def authenticate(self) -> None:
        """The connection presented the token: it is never evicted from now on."""
        self._pool._authenticate(self)

    def answering(self, busy: bool) -> None:
        """Whether a response is in flight (an unauthenticated one is then evicted last)."""
        self.busy = busy

    def release(self) -> None:
        """The connection closed. Idempotent."""
        self._pool._release(self)

    def note(self, event: str) -> None:
        """Count something that happened to this connection (e.g. `head_timeout`)."""
        self._pool.note(event)

    def _evict(self) -> None:
        self.evicted = True
        if self._closer is not None:
            self._closer()


class ConnectionPool:
    """Admission, authentication and eviction of connections (see the module docstring)."""

    def __init__(
        self, limits: ConnectionLimits, *, on_event: Callable[[str], None] | None = None
    ) -> None:
        self.limits = limits
        self.stats: Counter[str] = Counter()
        self._on_event = on_event
        # Insertion order is admission order: the first entry is the oldest.
        self._unauthenticated: dict[Ticket, None] = {}
        self._authenticated: set[Ticket] = set()

    @property
    def held(self) -> int:
        """Connections held now."""
        return len(self._unauthenticated) + len(self._authenticated)

    @property
    def unauthenticated(self) -> int:
        """Connections held now that have not presented the token."""
        return len(self._unauthenticated)

    def admit(self) -> Ticket | None:
        """A ticket for a new connection, evicting one if the pool is full; None: refuse it."""
        full = (
            self.held >= self.limits.total
            or len(self._unauthenticated) >= self.limits.unauthenticated
        )
        if full and not self.evict_one():
            self.note("refused")
            return None
        ticket = Ticket(self)
        self._unauthenticated[ticket] = None
        self.stats["admitted"] += 1
        return ticket

    def evict_one(self) -> bool:
        """Close the oldest unauthenticated connection (idle ones first); False if there is none."""
        victim = next((t for t in self._unauthenticated if not t.busy), None)
        if victim is None:
            victim = next(iter(self._unauthenticated), None)
        if victim is None:
            return False
        del self._unauthenticated[victim]
        self.note("evicted")
        victim._evict()
        return True

    def note(self, event: str) -> None:
        """Count `event` (and report it to `on_event`)."""
        self.stats[event] += 1
        if self._on_event is not None:
            self._on_event(event)

    def _authenticate(self, ticket: Ticket) -> None:
        if ticket.authenticated or ticket not in self._unauthenticated:
            return  # already counted, or evicted or released meanwhile
        del self._unauthenticated[ticket]
        self._authenticated.add(ticket)
        ticket.authenticated = True
        self.stats["authenticated"] += 1

    def _release(self, ticket: Ticket) -> None:
        if ticket.released:
            return
        ticket.released = True
        self._unauthenticated.pop(ticket, None)
        self._authenticated.discard(ticket)
