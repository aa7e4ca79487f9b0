"""Proven lines: how reading a whole log skips checking again what was checked before.

Reading an event line in full proves its data canonical and finite by writing
it again and comparing the bytes (`SessionEvent.from_canonical_json`), and
indexing it reads its first bytes once more: together about three quarters of
what reading a long log costs. Both are properties of the bytes, so they need
not be repeated while the bytes stay the same:

1. **What is proven.** A `LineIndex` counts the leading event lines known to
   be the canonical form of valid events, numbered from 0 (`proven`), and
   keeps the CRC-32 of their bytes (`crc`). Lines this backend appended are
   proven as they are written (its encoder produces nothing else); lines read
   in full by `read_log` and found canonical are proven by that read. The
   sidecar keeps both, so the proof outlives the process that made it.
2. **When it counts.** `read_log` trusts a `Claim` of `n` proven lines ending
   at offset `end` only if the CRC-32 of the bytes between the header and
   `end`, as read now, is the claimed one (≈ 3 ms for 12 MB). Those lines are
   then indexed and read in one pass from their envelopes only, each still
   checked to be in the canonical envelope, to carry its own seq and to
   begin where the one before ended, the last ending at `end`.
3. **Never a guess.** A CRC that differs (an edit, a damaged sector, a stale
   or lying sidecar) or a proven line that does not read back proves nothing:
   the log is then read in full, exactly as without a claim, and a malformed
   line is `CorruptLog`. What a CRC-32 cannot tell apart is a change that
   keeps it, by chance 1 in 2³²; a change made to keep it is out of scope,
   since whoever can write the logs can write anything into them.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...session.event import SessionEvent
from . import index as line_index
from .files import FileState
from .format import ScannedLines, parse_event
from .index import LineIndex

__all__ = ["Claim", "claim_of", "read_log"]


@dataclass(frozen=True, slots=True)
class Claim:
    """`lines` leading event lines, ending at offset `end`, whose bytes have CRC-32 `crc`."""

    lines: int
    end: int
    crc: int


def claim_of(proven: int, bounds: Sequence[int], crc: int) -> Claim | None:
    """The claim an index (or a sidecar) with these `bounds` makes; None if it makes none."""
    if not 0 < proven < len(bounds):
        return None
    return Claim(proven, bounds[proven], crc)


def read_log(
    path: Path, session_id: str, data: bytes, state: FileState | None, claim: Claim | None
) -> tuple[LineIndex, tuple[SessionEvent, ...]]:
    """The index of the whole log in `data` and every event in it.

    Uses `claim` as the module docstring says; the index returned records
    what is proven once this read is done. Raises `CorruptLog` as
    `line_index.build` and `parse_event` do.
    """
    prefix = _proven_prefix(data, claim)
    found, events = (None, []) if prefix is None else prefix
    index = line_index.build(path, session_id, data, state, found)
    bounds = index.bounds
    first_unproven: int | None = None
    check = SessionEvent.from_canonical_json
    for seq in range(len(events), index.length):
        start, stop = bounds[seq], bounds[seq + 1] - 1
        event = check(data, start, stop)
        if event is None or event.seq != seq:
            event = parse_event(path, seq, data[start:stop])  # not canonical: read in full
            if first_unproven is None:
                first_unproven = seq
        events.append(event)
    proven = index.length if first_unproven is None else first_unproven
    trusted, base = (0, 0) if prefix is None or claim is None else (claim.lines, claim.crc)
    index.crc = zlib.crc32(memoryview(data)[bounds[trusted] : bounds[proven]], base)
    index.proven = proven
    return index, tuple(events)


def _proven_prefix(
    data: bytes, claim: Claim | None
) -> tuple[ScannedLines, list[SessionEvent]] | None:
    """The claimed lines, indexed and read from their envelopes; None if the claim fails."""
    if claim is None:
        return None
    header_end = data.find(b"\n") + 1
    if not 0 < header_end < claim.end <= len(data):
        return None
    if zlib.crc32(memoryview(data)[header_end : claim.end]) != claim.crc:
        return None
    starts: list[int] = []
    types: list[str] = []
    events: list[SessionEvent] = []
    reached = header_end
    # The one caller of this private reader: these bytes passed the CRC just now.
    for start, end, event in SessionEvent._from_proven_lines(data, header_end, claim.end):
        if event.seq != len(events):
            return None
        starts.append(start)
        types.append(event.type)
        events.append(event)
        reached = end
    if len(events) != claim.lines or reached != claim.end:
        return None  # the lines read are not exactly the ones claimed
    return ScannedLines(starts, types, claim.end, False), events
