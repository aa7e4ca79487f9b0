"""Sidecar line indexes: `.<id>.jsonl.idx` beside a long log, so opening it needs no scan.

A sidecar is a cache, never the authority: it is written for logs of at least
`SIDECAR_MIN_LINES` lines when their writer is released or parked, and used
only when it still describes the file (same size and mtime, or a file that
grew since, whose new lines are then indexed), and its check of the header
and last line matches what the file holds. Anything else, or a failure to
read or write it, just means the log is scanned (`dsh.persistence.jsonl.index`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ..errors import StorageError
from . import index as line_index
from .files import FileState, open_regular, pread_exact, read_all, storage_errors, write_replacing
from .format import parse_header
from .index import LineIndex

__all__ = ["SIDECAR_MIN_LINES", "Sidecars"]

log = logging.getLogger("dsh.persistence.jsonl")

# Logs shorter than this are rescanned rather than given a sidecar index: a scan
# of 1,000 lines costs ≈ 0.6 ms, about what writing and checking a sidecar does.
SIDECAR_MIN_LINES = 1_000
# A sidecar is at most ≈ 12 bytes per line: anything far larger is not ours.
_SIDECAR_SLACK = 1 << 20


class Sidecars:
    """The sidecars of one data directory's logs; `enabled` False writes and reads none."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @staticmethod
    def path_of(path: Path) -> Path:
        """The sidecar of the log at `path`."""
        return path.with_name(f".{path.name}.idx")

    def save(self, index: LineIndex, fd: int, state: FileState) -> None:
        """Write `index` of the log open as `fd` (in `state`), when that is worth it."""
        if not self.enabled or index.length < SIDECAR_MIN_LINES or index.saved == state:
            return
        try:
            head = pread_exact(fd, index.header_end, 0)
            last = _last_line(index, fd)
            payload = line_index.encode(index, state, line_index.check_of(head, last))
            write_replacing(self.path_of(index.path), payload)
        except OSError as error:
            log.info(
                "cannot write the line index of %s (it is only a cache): %s", index.path, error
            )
            return
        index.saved = state

    def load(self, session_id: str, path: Path, fd: int, state: FileState) -> LineIndex | None:
        """The index of the log open as `fd` from its sidecar; None when there is no
        usable one (the module docstring says when)."""
        sidecar = self.read(path, state)
        if sidecar is None or sidecar.size > state.size:
            return None
        if sidecar.size == state.size and sidecar.mtime_ns != state.mtime_ns:
            return None  # same size, touched since: it may have been rewritten in place
        length = len(sidecar.bounds) - 1
        with storage_errors(path, "read"):
            head = pread_exact(fd, sidecar.bounds[0], 0)
            if length:
                start, stop = sidecar.bounds[length - 1], sidecar.bounds[length] - 1
                last = pread_exact(fd, stop - start, start)
            else:
                last = b""
        if line_index.check_of(head, last) != sidecar.check or not head.endswith(b"\n"):
            return None
        header = parse_header(path, session_id, head[:-1])
        index = line_index.from_sidecar(path, header, sidecar, state)
        if sidecar.size < state.size:  # it grew since: index only the new lines
            with storage_errors(path, "read"):
                index.extend(read_all(fd, index.end), index.end)
            index.saved = None
        return index

    def read(self, path: Path, state: FileState) -> line_index.Sidecar | None:
        """The decoded sidecar of the log at `path`, or None (none, unreadable, not ours)."""
        if not self.enabled:
            return None
        try:
            opened = open_regular(self.path_of(path))
        except StorageError:
            return None
        if opened is None:
            return None
        fd, status = opened
        try:
            if status.st_size > 16 * state.size + _SIDECAR_SLACK:
                return None
            return line_index.decode(read_all(fd))
        except OSError:
            return None
        finally:
            os.close(fd)


def _last_line(index: LineIndex, fd: int) -> bytes:
    if not index.length:
        return b""
    start, stop = index.span(index.length - 1)
    return pread_exact(fd, stop - start, start)
