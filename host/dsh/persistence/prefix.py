"""Proving that what storage holds under a live Session's id is a prefix of it.

The write path's rules 3 and 4 (`coordinator`) rest on these: a stored log is
adopted, or written after, only once its content is read back and found equal
to the live events — the header's identity and every event's canonical JSON,
never a count. Anything else is a `DivergedLog`, which is never extended or
replaced.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from ..session.event import SessionEvent
from ..session.log import Session
from .backend import Backend
from .errors import DivergedLog, StorageError

__all__ = ["adopt", "same_json", "verify"]

# A verification reads back at most this many events per backend call.
_VERIFY_CHUNK = 1_000


async def adopt(backend: Backend, session: Session, end: int) -> tuple[int, Hashable | None]:
    """Prove the stored log is a prefix of `session`'s first `end` events: `(length,
    incarnation)` of the stored log. Raises `DivergedLog`, or `StorageError` when the log
    vanished or changed while read."""
    mark = await backend.mark(session.id)
    stored = await backend.inspect(session.id)
    if stored is None or mark is None:
        raise StorageError(
            f"session {session.id}: storage reported it as stored, then found nothing"
        )
    header_matches = stored.header.identity_equals(session.header)
    length = len(stored.events)
    live = session.events[:length]
    if not header_matches or length > end or not same_json(stored.events, live):
        raise DivergedLog(
            f"session {session.id}: storage holds a different log under this id "
            f"({length} events); refusing to extend or replace it"
        )
    if mark.length != length:
        raise StorageError(f"session {session.id}: its stored log changed while read")
    return length, mark.incarnation


async def verify(backend: Backend, session: Session, start: int, stop: int) -> None:
    """Raise `DivergedLog` unless stored events `[start, stop)` equal `session`'s (and, from
    0, the stored header is its header)."""
    if start == 0:
        header = await backend.header(session.id)
        if header is None or not header.identity_equals(session.header):
            raise DivergedLog(
                f"session {session.id}: storage now holds a different log "
                "under this id; refusing to extend or replace it"
            )
    for chunk in range(start, stop, _VERIFY_CHUNK):
        upper = min(chunk + _VERIFY_CHUNK, stop)
        stored = await backend.read(session.id, chunk, upper)
        live = session.events[chunk:upper]
        if len(stored) != upper - chunk or not same_json(stored, live):
            raise DivergedLog(
                f"session {session.id}: storage holds other events than the live "
                f"ones in [{chunk}, {upper}); refusing to extend or replace it"
            )


def same_json(stored: Sequence[SessionEvent], live: Sequence[SessionEvent]) -> bool:
    """Equal event by event. A resumed Session is built from the very events storage
    returned, so identity settles those; others compare as canonical JSON, not as
    models (Python would call `true` equal to `1`)."""
    if len(stored) != len(live):
        return False
    return all(a is b or a.to_json() == b.to_json() for a, b in zip(stored, live, strict=True))
