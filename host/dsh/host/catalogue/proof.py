"""What storage proves of a live Session: the prefix it holds exactly (DESIGN §9).

A view is a receipt of durability, so history and live views show it only
for events storage can vouch for. `PrefixProof.prove(session)` answers how
many leading events of a live Session the stored log holds *exactly*: the
stored header is identity-equivalent to the live one
(`SessionHeader.identity_equals`) and every stored event has the canonical
JSON of the live event at its seq. A missing, failing, divergent or longer
stored log proves nothing (0).

Cheap, because it is ranged and remembered: per exact live object (weakly) it
keeps how far it verified and under which incarnation of the log
(`Backend.mark`). While the incarnation is the same, only events the log
gained since are read and compared; when it changed (the log was rewritten,
truncated, replaced or restored: anything but this host's appends) the whole
log is compared again, and until that succeeds the answer is 0. A resumed
Session starts out verified: its prefix *is* what storage returned
(`seed`).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Hashable, Sequence

from ...persistence.backend import Backend
from ...session.event import SessionEvent
from ...session.log import Session

__all__ = ["PrefixProof"]

log = logging.getLogger(__name__)

_CHUNK = 1_000


class PrefixProof:
    """Proves stored prefixes of live Sessions against one backend (see the module docstring)."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._verified: weakref.WeakKeyDictionary[Session, tuple[int, Hashable | None]] = (
            weakref.WeakKeyDictionary()
        )

    def seed(self, session: Session, length: int, incarnation: Hashable | None) -> None:
        """`session`'s first `length` events are the very events storage returned, under
        `incarnation` (a resume built it from them)."""
        if incarnation is not None:
            self._verified[session] = (length, incarnation)

    def known(self, session: Session) -> int:
        """How far `session` was verified last time (0: never)."""
        return self._verified.get(session, (0, None))[0]

    async def prove(self, session: Session) -> int:
        """How many leading events of live `session` storage holds exactly; 0 for none."""
        try:
            return await self._prove(session)
        except Exception as error:
            log.warning("cannot verify stored history of %s: %s", session.id, error)
            self._verified.pop(session, None)
            return 0

    async def _prove(self, session: Session) -> int:
        mark = await self._backend.mark(session.id)
        if mark is None or mark.length > len(session):
            self._verified.pop(session, None)
            return 0
        length, incarnation = self._verified.get(session, (0, None))
        same_log = incarnation is not None and incarnation == mark.incarnation
        if same_log and length == mark.length:
            return length
        start = length if same_log and length <= mark.length else 0
        if start == 0:
            header = await self._backend.header(session.id)
            if header is None or not header.identity_equals(session.header):
                self._verified.pop(session, None)
                return 0
        for chunk in range(start, mark.length, _CHUNK):
            stop = min(chunk + _CHUNK, mark.length)
            stored = await self._backend.read(session.id, chunk, stop)
            if not _same(stored, session.events[chunk:stop]):
                self._verified.pop(session, None)
                return 0
        self._verified[session] = (mark.length, mark.incarnation)
        return mark.length


def _same(stored: Sequence[SessionEvent], live: Sequence[SessionEvent]) -> bool:
    # Canonical JSON, not model equality: Python would call `true` equal to `1`.
    if len(stored) != len(live):
        return False
    return all(a is b or a.to_json() == b.to_json() for a, b in zip(stored, live, strict=True))
