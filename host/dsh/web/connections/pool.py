"""Which connections the server holds, and which one it lets go first when it is full.

Every connection the server accepts asks the `ConnectionPool` for a
`Ticket` and gives it back when it closes. The rules:

1. **Every connection starts unauthenticated.** It becomes authenticated
   when one of its requests presents the access token (the protocol checks,
   in constant time); it stays authenticated until it closes.
2. **Two caps.** At most `limits.total` connections are held, and at most
   `limits.unauthenticated` of them unauthenticated.
3. **A full pool makes room by evicting one unauthenticated connection**,
   choosing by what the connection is doing (the protocol reports it):
   first one **partway through a request** (part of its head or body has
   arrived and the rest is still owed), then one that is **quiet** (nothing
   of a request has arrived: a newcomer whose first packet has not been read
   yet, or a kept-alive connection between requests), and last one whose
   **response is in flight**. Within each kind the oldest goes first.
   Authenticated connections, WebSockets included, are never evicted.
4. **Only when nothing can be evicted is the newcomer refused.**

Why evict rather than refuse: a slowloris attacker who holds every
unauthenticated slot would otherwise lock out every newcomer, and a newcomer
cannot show its token before it is admitted.

Why partway first: a newcomer cannot show its token before the server has
read its first packet, and a client may take a while to send it (a loaded
machine, a browser that opens a connection before it has a request for it).
Slowloris sends a little, slowly: every one of its connections is partway
through a head that never ends. Evicting the oldest regardless let the
attacker's reconnects push out a quiet newcomer: once descriptors ran out
with room for about 20 connections, an attacker reconnecting 1,000 times a
second evicted every connection within a few tens of milliseconds of its
admission: a client that waited 50 ms before sending was closed 11 times in
20 without an answer (80 ms: 17 in 20). Now, while any connection is partway
through a request, a quiet one is never evicted (the same clients: 20 in 20
answered, at 50, 80 and 200 ms), and a client that sends its whole
request head in one write (a browser, `curl`, a script) is authenticated
the moment it is read. The attacker's newcomers are quiet too until they are
read, but they turn partway the moment they are, and then go before it.

What this does not cover: a flood of connections that send nothing at all
is quiet like the newcomer, so among quiet connections the oldest goes
first, and a newcomer then has until `limits.unauthenticated` newer quiet
connections were admitted (the acceptor bounds how many it takes per turn of
the event loop for that reason); the head deadline bounds how long any
quiet connection is held. A client that sends its head in pieces is partway
until its last piece.

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

    __slots__ = (
        "_closer",
        "_pool",
        "authenticated",
        "busy",
        "evicted",
        "partway",
        "released",
    )

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool
        self._closer: Callable[[], None] | None = None
        self.authenticated = False
        self.busy = False
        self.partway = False
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

    def receiving(self, partway: bool) -> None:
        """Whether part of a request has arrived and the rest is still owed (an
        unauthenticated one is then evicted first); False: nothing of one has arrived."""
        self.partway = partway

    @property
    def rank(self) -> int:
        """Eviction order of an unauthenticated ticket: 0 partway, 1 quiet, 2 answering."""
        if self.busy:
            return 2
        return 0 if self.partway else 1

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

    @property
    def partway(self) -> int:
        """Unauthenticated connections held now that are partway through a request."""
        return sum(ticket.rank == 0 for ticket in self._unauthenticated)

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
        """Close one unauthenticated connection: partway ones first, then quiet ones, then
        ones being answered, the oldest of the first kind there is; False if there is none."""
        victim: Ticket | None = None
        for ticket in self._unauthenticated:  # oldest first
            if victim is None or ticket.rank < victim.rank:
                victim = ticket
                if victim.rank == 0:
                    break
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
