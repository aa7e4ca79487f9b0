"""The line-offset index of one log file: where each event's line is, and its type.

A `LineIndex` lets a reader find event `seq` (one `pread`) and every event of
a type (bisect) without decoding anything else, and carries what a Session
list shows (the header, the length, the title and the preview). It is never
the authority: it describes one `FileState` of the log, and a missing or
stale index is rebuilt from the file (`build`), or extended by scanning only
the bytes a log grew by (`extend`). Every event read through an index is
checked against it (its seq, and its type when the read was filtered by
type), so an index that lies is noticed and rebuilt.

Threads. One writer (the backend's I/O worker) appends to an index while
readers in other threads use it. `bounds` holds `length + 1` offsets (where
each line starts, then the end of the last one) and grows by one
`array.extend` per batch, which is atomic under the GIL; the per-type seq
arrays are extended *before* it. So a reader that takes `length` once sees a
consistent prefix: every line below it has its bounds and its type entry.

Proven lines. `proven` counts the leading event lines known to be the
canonical form of valid events (this backend wrote them, or read them in
full), and `crc` is the CRC-32 of their bytes: `proven` reads such lines from
their envelope only, once the bytes still match that CRC.

The sidecar (`encode` / `decode`) stores an index next to its log, so a
restarted host need not scan long logs again: one metadata line (the file
size and mtime it describes, the summary, a CRC of the header line and the
last line, the proven lines and their CRC) and the raw arrays. Anything that
does not check out is ignored; a sidecar of the previous version is too
(the log is scanned again and the next release writes a new one).
"""

from __future__ import annotations

import json
import sys
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import accumulate, islice
from pathlib import Path
from typing import Any

from ...session.event import SessionEvent
from ...session.facts import SummaryFacts
from ...session.header import SessionHeader
from ...session.types import SESSION_TITLE, USER_MESSAGE
from ..backend import StoredSummary
from .files import FileState
from .format import EncodedBatch, ScannedLines, parse_event, parse_header, scan_lines, split_header

__all__ = [
    "MAGIC",
    "LineIndex",
    "Sidecar",
    "build",
    "check_of",
    "decode",
    "encode",
    "from_sidecar",
]

MAGIC = b"DSH-LINE-INDEX 2\n"
_BOUND = "Q"
_SEQ = "I"


@dataclass(eq=False, slots=True)
class LineIndex:
    """The index of one log (see the module docstring)."""

    path: Path
    header: SessionHeader
    bounds: array[int]
    by_type: dict[str, array[int]]
    facts: SummaryFacts
    torn: bool
    state: FileState | None = None
    # Built by scanning this very file state: a decoding failure then is the file's, not ours.
    scanned: bool = False
    # The state a sidecar was last written for (None: never).
    saved: FileState | None = None
    # Leading event lines proven canonical, and the CRC-32 of their bytes (`proven`).
    proven: int = 0
    crc: int = 0

    @property
    def length(self) -> int:
        return len(self.bounds) - 1

    @property
    def header_end(self) -> int:
        return self.bounds[0]

    @property
    def end(self) -> int:
        """The offset just past the last complete line (the durable size)."""
        return self.bounds[-1]

    def summary(self) -> StoredSummary:
        return StoredSummary(
            id=self.header.id,
            created_at=self.header.created_at,
            length=self.length,
            lineage=self.header.lineage,
            title=self.facts.title,
            preview=self.facts.preview,
            # The last write, as the file says: no line is read for it.
            updated_at=None
            if self.state is None or not self.length
            else self.state.mtime_ns // 1_000_000,
        )

    def span(self, seq: int) -> tuple[int, int]:
        """The bytes of event `seq`'s line, newline excluded."""
        return self.bounds[seq], self.bounds[seq + 1] - 1

    def seqs(self, start: int, stop: int, types: Collection[str] | None) -> list[int]:
        """The seqs in `[start, stop)` (cut at the length), of `types` only when given."""
        stop = min(stop, self.length)
        if start >= stop:
            return []
        if types is None:
            return list(range(start, stop))
        runs = []
        for name in set(types):
            seqs = self.by_type.get(name)
            if seqs is not None:
                runs.append(seqs[bisect_left(seqs, start) : bisect_left(seqs, stop)])
        if len(runs) == 1:
            return list(runs[0])
        return sorted(seq for run in runs for seq in run)

    def append(self, batch: EncodedBatch, events: Sequence[SessionEvent]) -> None:
        """Take an appended batch in (the writer only; see the module docstring)."""
        first = self.length
        if self.proven == first:  # lines this backend encoded are canonical by construction
            self.crc = zlib.crc32(batch.payload, self.crc)
            self.proven = first + len(batch.lengths)
        types = batch.types
        if types and types.count(types[0]) == len(types):  # one type: one extend
            seqs = self.by_type.get(types[0])
            if seqs is None:
                self.by_type[types[0]] = array(_SEQ, range(first, first + len(types)))
            else:
                seqs.extend(range(first, first + len(types)))
        else:
            for offset, name in enumerate(types):
                self.by_type.setdefault(name, array(_SEQ)).append(first + offset)
        # One extend, and no Python code runs inside it: readers see all of the batch or none.
        self.bounds.extend(islice(accumulate(batch.lengths, initial=self.end), 1, None))
        if SESSION_TITLE not in types and (
            self.facts.preview is not None or USER_MESSAGE not in types
        ):
            return  # nothing here can change the summary (most batches)
        for position, name in enumerate(types):
            if name == SESSION_TITLE or (name == USER_MESSAGE and self.facts.preview is None):
                self.facts.add(events[position])

    def extend(self, data: bytes, offset: int) -> None:
        """Take in the lines of `data`, which are the file's bytes from `offset` (= `end`) on."""
        self._take(scan_lines(self.path, data, 0, self.length), offset, data)

    def _take(self, scanned: ScannedLines, base: int, data: bytes) -> None:
        first = self.length
        for position, name in enumerate(scanned.types):
            self.by_type.setdefault(name, array(_SEQ)).append(first + position)
        ends = [*scanned.starts[1:], scanned.end] if scanned.starts else []
        self.bounds.extend([base + end for end in ends])  # one list: one atomic extend
        self.torn = scanned.torn

        def line(position: int) -> bytes:
            return data[scanned.starts[position] : ends[position] - 1]

        def event(position: int) -> SessionEvent:
            return parse_event(self.path, first + position, line(position))

        # Only the lines that can change the summary are decoded: the latest title,
        # and the person's first message while there is no preview yet.
        titles = [i for i, name in enumerate(scanned.types) if name == SESSION_TITLE]
        if titles:
            self.facts.add(event(titles[-1]))
        for position, name in enumerate(scanned.types):
            if self.facts.preview is not None:
                break
            if name == USER_MESSAGE and _may_be_the_persons(line(position)):
                self.facts.add(event(position))


def _may_be_the_persons(line: bytes) -> bool:
    """False only for a `message/user` line that cannot have `source.kind` "user".

    JSON spells the string "user" as `"user"`, or with a `\\u` escape for a
    letter, so a line with neither cannot hold it (its type, `"message/user"`,
    never matches): a log of a plugin's follow-ups, with no message of the
    person yet, is summarised without decoding one of them.
    """
    return b'"user"' in line or b"\\u" in line


def build(
    path: Path,
    session_id: str,
    data: bytes,
    state: FileState | None,
    found: ScannedLines | None = None,
) -> LineIndex:
    """The index of a whole log held in `data`; raises `CorruptLog` as `scan_lines` does.

    `found` is what is already known of the first lines after the header
    (`proven` read them); only the bytes after it are scanned.
    """
    header_end = split_header(path, data)
    index = LineIndex(
        path=path,
        header=parse_header(path, session_id, data[: header_end - 1]),
        bounds=array(_BOUND, [header_end]),
        by_type={},
        facts=SummaryFacts(),
        torn=False,
        state=state,
        scanned=True,
    )
    if found is None:
        scanned = scan_lines(path, data, header_end, 0)
    else:
        rest = scan_lines(path, data, found.end, len(found.starts))
        scanned = ScannedLines(
            found.starts + rest.starts, found.types + rest.types, rest.end, rest.torn
        )
    index._take(scanned, 0, data)
    return index


# -- the sidecar ---------------------------------------------------------------


def encode(index: LineIndex, state: FileState, check: int) -> bytes:
    """The sidecar bytes of `index`, which describes the log in `state`."""
    length = index.length
    bounds = index.bounds[: length + 1]
    names = sorted(index.by_type)
    runs = [index.by_type[name] for name in names]
    counts = [bisect_left(run, length) for run in runs]
    meta = {
        "size": state.size,
        "mtimeNs": state.mtime_ns,
        "length": length,
        "torn": index.torn,
        "check": check,
        "order": sys.byteorder,
        "items": [array(_BOUND).itemsize, array(_SEQ).itemsize],
        "types": [[name, count] for name, count in zip(names, counts, strict=True)],
        "title": index.facts.title,
        "preview": index.facts.preview,
        "proven": index.proven,
        "crc": index.crc,
    }
    parts = [MAGIC, json.dumps(meta, separators=(",", ":")).encode() + b"\n", bounds.tobytes()]
    parts += [run[:count].tobytes() for run, count in zip(runs, counts, strict=True)]
    return b"".join(parts)


@dataclass(frozen=True, slots=True)
class Sidecar:
    """A decoded sidecar, not yet checked against its log."""

    size: int
    mtime_ns: int
    check: int
    torn: bool
    bounds: array[int]
    by_type: dict[str, array[int]]
    title: str | None
    preview: str | None
    proven: int = 0
    crc: int = 0


def decode(data: bytes) -> Sidecar | None:
    """The sidecar in `data`, or None if it is not one this version wrote, whole."""
    if not data.startswith(MAGIC):
        return None
    newline = data.find(b"\n", len(MAGIC))
    try:
        meta: Any = json.loads(data[len(MAGIC) : newline])
        return _sidecar(meta, memoryview(data)[newline + 1 :])
    except (ValueError, TypeError, KeyError, OverflowError):
        return None


def _sidecar(meta: Any, body: memoryview) -> Sidecar | None:
    bound_size, seq_size = array(_BOUND).itemsize, array(_SEQ).itemsize
    if meta["order"] != sys.byteorder or meta["items"] != [bound_size, seq_size]:
        return None
    length = meta["length"]
    types = [(str(name), int(count)) for name, count in meta["types"]]
    expected = (length + 1) * bound_size + sum(count for _, count in types) * seq_size
    if not isinstance(length, int) or length < 0 or len(body) != expected:
        return None
    bounds = array(_BOUND)
    bounds.frombytes(body[: (length + 1) * bound_size])
    by_type: dict[str, array[int]] = {}
    position = (length + 1) * bound_size
    for name, count in types:
        run = array(_SEQ)
        run.frombytes(body[position : position + count * seq_size])
        by_type[name] = run
        position += count * seq_size
    if sum(len(run) for run in by_type.values()) != length:
        return None
    proven, crc = meta["proven"], meta["crc"]
    if type(proven) is not int or not 0 <= proven <= length or type(crc) is not int:
        return None
    return Sidecar(
        size=int(meta["size"]),
        mtime_ns=int(meta["mtimeNs"]),
        check=int(meta["check"]),
        torn=bool(meta["torn"]),
        bounds=bounds,
        by_type=by_type,
        title=_optional_str(meta["title"]),
        preview=_optional_str(meta["preview"]),
        proven=proven,
        crc=crc,
    )


def _optional_str(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError("not a string")


def check_of(header_line: bytes, last_line: bytes) -> int:
    """The content check a sidecar carries: a CRC of the header line and the last line."""
    return zlib.crc32(last_line, zlib.crc32(header_line))


def from_sidecar(
    path: Path, header: SessionHeader, sidecar: Sidecar, state: FileState
) -> LineIndex:
    return LineIndex(
        path=path,
        header=header,
        bounds=sidecar.bounds,
        by_type=sidecar.by_type,
        facts=SummaryFacts(title=sidecar.title, preview=sidecar.preview),
        torn=sidecar.torn,
        state=state,
        saved=state,
        proven=sidecar.proven,
        crc=sidecar.crc,
    )
