"""One Session's log as a file of its own, in the storage format (DESIGN §4, public).

What `dsh sessions export` writes and `dsh sessions import` reads: exactly
the bytes of a JSONL store's log (`format`) — the canonical header line,
then one canonical event per line — whichever store it came from. So a log
exported from JSONL, imported into PostgreSQL and exported again is the
same file byte for byte, and the file can be dropped into a data dir's
`sessions/` folder as it is.

Reading a file (`parse_log`) is as strict as reading a stored log, and
stricter at the end: the header must be valid, every event valid and
numbered from 0 in order, and a torn last line — which in a store is a
crash artefact to ignore — makes the file refused (`CorruptLog`): a file
that was cut short is not the Session that was exported.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from ...base.validation import describe
from ...session.event import SessionEvent
from ...session.header import SessionHeader
from ..backend import StoredSession
from ..errors import CorruptLog
from .format import encode_events, encode_header
from .proven import read_log

__all__ = ["encode_log", "parse_log"]


def encode_log(header: SessionHeader, events: Sequence[SessionEvent]) -> bytes:
    """The log as a file's bytes: the header line, then one line per event."""
    return encode_header(header) + encode_events(events).payload


def parse_log(path: Path | str, data: bytes) -> StoredSession:
    """The Session a file's bytes hold (`path` names it in errors); raises `CorruptLog`."""
    path = Path(path)
    end = data.find(b"\n")
    if end < 0:
        raise CorruptLog(path, 1, "no complete header line (is it a dsh session log?)")
    try:
        header = SessionHeader.from_json(data[:end])
    except ValidationError as error:
        raise CorruptLog(path, 1, f"invalid header: {describe(error, first_only=True)}") from None
    index, events = read_log(path, header.id, data, None, None)
    if index.torn:
        raise CorruptLog(
            path, len(events) + 2, "the last line is incomplete: the file was cut short"
        )
    return StoredSession(index.header, events, False)
