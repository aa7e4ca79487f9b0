"""The public JSONL format (DESIGN §4): how lines are written, split and decoded.

A log is the header on line 1 (written canonically: an absent
`delegationDepth` is written as 0) and one event per further line, UTF-8,
every line `\\n`-terminated. Events are written in their canonical JSON form,
`{"seq":N,"type":"area/name","time":…,"data":…}`, so the seq and type of a
line can be read from its first bytes without decoding the rest
(`scan_lines`); a line written some other way (by hand) is decoded in full to
learn them, so any valid JSON event line is accepted.

A torn last line (no trailing `\\n`, or a final line that is not JSON) is the
artefact of a crash during an append and is not part of the log. Any other
malformed line is `CorruptLog` naming the file and the line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from ...base.validation import describe
from ...session.event import SessionEvent
from ...session.header import SessionHeader
from ...session.types import EVENT_TYPE_PATTERN
from ..errors import CorruptLog

__all__ = [
    "SUFFIX",
    "EncodedBatch",
    "ScannedLines",
    "encode_events",
    "encode_header",
    "parse_event",
    "parse_header",
    "scan_lines",
    "split_header",
]

SUFFIX = ".jsonl"
# The canonical first bytes of an event line: its seq and its type (types never need escaping).
_CANONICAL = re.compile(rb'\{"seq":(0|[1-9][0-9]*),"type":"([^"\\\n]{1,128})",[^\n]*\n')
_TYPE = re.compile(EVENT_TYPE_PATTERN.encode())


class EncodedBatch(NamedTuple):
    """Events as the bytes of their lines, with each line's length (newline included).

    A named tuple: one is made for every batch of every Session, and a tuple is
    the cheapest immutable record to make."""

    payload: bytes
    lengths: tuple[int, ...]
    types: tuple[str, ...]


def encode_header(header: SessionHeader) -> bytes:
    """The header line, canonical, `\\n`-terminated."""
    return header.canonical().to_json().encode("utf-8") + b"\n"


def encode_events(events: Sequence[SessionEvent]) -> EncodedBatch:
    # An event holds its data as canonical bytes: a line is those bytes in their envelope.
    # Comprehensions and `map`, not generators: every batch of every Session passes here.
    parts = SessionEvent.lines(events)
    return EncodedBatch(
        b"".join(parts),
        tuple(map(len, parts)),
        tuple([event.type for event in events]),
    )


def split_header(path: Path, data: bytes) -> int:
    """The offset just past the header line; `CorruptLog` if there is no complete one."""
    end = data.find(b"\n")
    if end < 0:
        raise CorruptLog(path, 1, "no header line")
    return end + 1


def parse_header(path: Path, session_id: str, raw: bytes) -> SessionHeader:
    """Decode line 1 (without its newline) and check it names `session_id`."""
    try:
        header = SessionHeader.from_json(raw)
    except ValidationError as error:
        raise CorruptLog(path, 1, f"invalid header: {describe(error, first_only=True)}") from None
    if header.id != session_id:
        raise CorruptLog(path, 1, f"header names session {header.id}, not {session_id}")
    return header


def parse_event(path: Path, seq: int, raw: bytes) -> SessionEvent:
    """Decode the line of event `seq` (without its newline) and check its seq."""
    line = seq + 2
    try:
        event = SessionEvent.from_json(raw)
    except ValidationError as error:
        raise CorruptLog(path, line, f"invalid event: {describe(error, first_only=True)}") from None
    if event.seq != seq:
        raise CorruptLog(path, line, f"event has seq {event.seq} where {seq} belongs")
    return event


@dataclass(frozen=True, slots=True)
class ScannedLines:
    """What `scan_lines` found: where each event line starts, its type, and the end.

    `end` is the offset just past the last complete line (the durable size);
    `torn` says bytes after it were ignored as a torn tail.
    """

    starts: list[int]
    types: list[str]
    end: int
    torn: bool


def scan_lines(path: Path, data: bytes, offset: int, first_seq: int) -> ScannedLines:
    """Index the event lines of `data[offset:]`, the first of which has seq `first_seq`.

    Reads each line's seq and type from its canonical first bytes (decoding a
    line only when it is not canonical) and checks the seqs count up from
    `first_seq`. The last line is a torn tail if it has no newline or is not
    JSON. Raises `CorruptLog` for any other malformed line. Offsets are
    positions in `data`.
    """
    starts: list[int] = []
    types: list[str] = []
    pos = offset
    end = max(data.rfind(b"\n") + 1, offset)
    match = _CANONICAL.match
    while pos < end:
        seq = first_seq + len(starts)
        found = match(data, pos, end)
        if found is not None and int(found.group(1)) == seq and _TYPE.fullmatch(found.group(2)):
            starts.append(pos)
            types.append(found.group(2).decode("ascii"))
            pos = found.end()
            continue
        newline = data.index(b"\n", pos)
        event_type = _slow_type(path, seq, data[pos:newline], last=newline + 1 == len(data))
        if event_type is None:  # the last line is not JSON: a torn tail
            return ScannedLines(starts, types, pos, True)
        starts.append(pos)
        types.append(event_type)
        pos = newline + 1
    if starts and end == len(data) and not _is_json(data[starts[-1] : end - 1]):
        # The fast path reads only a line's first bytes: the last line may still be
        # a torn write that happens to end in a newline.
        return ScannedLines(starts[:-1], types[:-1], starts[-1], True)
    return ScannedLines(starts, types, end, end < len(data))


def _slow_type(path: Path, seq: int, raw: bytes, *, last: bool) -> str | None:
    """The type of a line that is not canonical, by decoding it; None for a torn last line."""
    if last and not _is_json(raw):
        return None
    return parse_event(path, seq, raw).type


def _is_json(raw: bytes) -> bool:
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True
