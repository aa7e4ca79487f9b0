"""Helpers of the JSONL read path: reading close lines at once, a log's first line, and
decoding many events without the cyclic collector walking them."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from .index import LineIndex

__all__ = ["READ_GAP", "collection_paused", "first_line", "runs"]

# Lines closer than this are read with one pread rather than one each.
READ_GAP = 16 * 1024


def runs(index: LineIndex, seqs: Sequence[int]) -> Iterator[tuple[int, int]]:
    """Group `seqs` (sorted) into runs whose lines are close enough for one read."""
    if not seqs:
        return
    first = last = seqs[0]
    for seq in seqs[1:]:
        if index.bounds[seq] - index.bounds[last + 1] > READ_GAP:
            yield first, last
            first = seq
        last = seq
    yield first, last


def first_line(fd: int) -> bytes | None:
    """The first line of the file without its newline, or None if it has no newline."""
    chunks: list[bytes] = []
    offset = 0
    while chunk := os.pread(fd, 64 * 1024, offset):
        newline = chunk.find(b"\n")
        if newline >= 0:
            chunks.append(chunk[:newline])
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)
    return None


@contextmanager
def collection_paused(pause: bool) -> Iterator[None]:
    """Pause cyclic garbage collection while many events are decoded.

    Every decoded event is a handful of container objects that all survive, so
    the collector walks the growing heap again and again: about a third of
    resuming a 100k-event Session went there. Decoding creates no cycles, so
    nothing is lost by waiting. Only an enabled collector is paused and it is
    always re-enabled, so decoders in several threads may finish in any order.
    """
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
