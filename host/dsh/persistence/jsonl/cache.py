"""What the JSONL backend remembers between calls, each part bounded and thread safe.

All of it is a cache keyed by a log's `FileState`: a different state is a
miss, never a wrong answer.

- `IndexCache`: recently used line indexes, bounded by their total lines
  (≈ 12 bytes each), so reading a page of a long cold log twice scans it once.
- `SummaryCache`: what `list()` shows per log, far smaller than an index, so
  a list of many Sessions stays cheap after their indexes were evicted.
- `InspectMemo`: the `StoredSession` an `inspect` returned, held weakly:
  while anyone still holds it (a resume building its Session, then proving
  its prefix), asking again returns the same object without decoding.
- `Incarnations`: per log, the last state this backend accounted for and an
  incarnation number that changes whenever the file is found in a state the
  backend did not produce (see `Backend.mark`).
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict
from typing import Generic, TypeVar

from ..backend import StoredSession, StoredSummary
from .files import FileState
from .index import LineIndex

__all__ = ["Incarnations", "IndexCache", "InspectMemo", "SummaryCache"]

_K = TypeVar("_K")
_V = TypeVar("_V")


class _Lru(Generic[_K, _V]):
    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._items: OrderedDict[_K, _V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: _K) -> _V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: _K, value: _V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)

    def drop(self, key: _K) -> None:
        with self._lock:
            self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)


class IndexCache:
    """Line indexes by Session id, at most `max_lines` lines in all (the newest kept)."""

    def __init__(self, max_lines: int) -> None:
        self._max_lines = max_lines
        self._items: OrderedDict[str, LineIndex] = OrderedDict()
        self._lines = 0
        self._lock = threading.Lock()

    def get(self, session_id: str, state: FileState) -> LineIndex | None:
        with self._lock:
            index = self._items.get(session_id)
            if index is None or index.state != state:
                return None
            self._items.move_to_end(session_id)
            return index

    def put(self, session_id: str, index: LineIndex) -> None:
        with self._lock:
            old = self._items.pop(session_id, None)
            if old is not None:
                self._lines -= old.length
            self._items[session_id] = index
            self._lines += index.length
            while self._lines > self._max_lines and len(self._items) > 1:
                _, evicted = self._items.popitem(last=False)
                self._lines -= evicted.length

    def drop(self, session_id: str) -> None:
        with self._lock:
            old = self._items.pop(session_id, None)
            if old is not None:
                self._lines -= old.length

    def __len__(self) -> int:
        return len(self._items)


class SummaryCache:
    """The `StoredSummary` of each recently listed log, with the state it describes."""

    def __init__(self, capacity: int = 16_384) -> None:
        self._items: _Lru[str, tuple[FileState, StoredSummary]] = _Lru(capacity)

    def get(self, session_id: str, state: FileState) -> StoredSummary | None:
        item = self._items.get(session_id)
        return item[1] if item is not None and item[0] == state else None

    def put(self, session_id: str, state: FileState, summary: StoredSummary) -> None:
        self._items.put(session_id, (state, summary))

    def drop(self, session_id: str) -> None:
        self._items.drop(session_id)


class InspectMemo:
    """The last `StoredSession` returned per log, while someone holds it."""

    def __init__(self, capacity: int = 1_024) -> None:
        self._items: _Lru[str, tuple[FileState, weakref.ref[StoredSession]]] = _Lru(capacity)

    def get(self, session_id: str, state: FileState) -> StoredSession | None:
        item = self._items.get(session_id)
        if item is None or item[0] != state:
            return None
        return item[1]()

    def put(self, session_id: str, state: FileState, stored: StoredSession) -> None:
        self._items.put(session_id, (state, weakref.ref(stored)))

    def drop(self, session_id: str) -> None:
        self._items.drop(session_id)


class Incarnations:
    """Which incarnation of each log this backend is looking at (see the module docstring)."""

    def __init__(self, capacity: int = 65_536) -> None:
        self._known: _Lru[str, tuple[FileState, int]] = _Lru(capacity)
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def observe(self, session_id: str, state: FileState) -> int:
        """The incarnation of the log found in `state`: a new one if the backend did not
        leave it in that state."""
        with self._lock:
            known = self._known.get(session_id)
            if known is not None and known[0] == state:
                return known[1]
            number = next(self._numbers)
            self._known.put(session_id, (state, number))
            return number

    def record(self, session_id: str, state: FileState) -> None:
        """The backend itself just left the log in `state` (an append, a repair)."""
        with self._lock:
            known = self._known.get(session_id)
            number = known[1] if known is not None else next(self._numbers)
            self._known.put(session_id, (state, number))

    def forget(self, session_id: str) -> None:
        """The log moved away (trash): whatever is found later is a new incarnation."""
        with self._lock:
            self._known.drop(session_id)
