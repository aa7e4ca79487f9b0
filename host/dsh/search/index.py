"""`SearchIndex`: the words of every stored message, as a rebuildable cache of the logs.

The logs are the truth; an index only makes finding fast. So:

1. **Only stored events** are indexed (the Host adds them after the flush
   that stored them), each once: adding a (Session, seq) again changes
   nothing.
2. **`through`**: per Session, how far (a seq, exclusive) it was indexed. A
   Session whose stored length is past it is indexed from there (at start,
   in the background: a crash between a flush and its indexing loses
   nothing for long).
3. **Deleted** Sessions are forgotten; a restored one is indexed again.
4. **Broken or missing** is never an error for the person: an index that
   cannot be opened is moved aside and made again from the logs (`dsh index
   rebuild` does the same by hand).

`search(query, limit)` answers the best-ranked messages (BM25), best first.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass

from .terms import Query

__all__ = ["Document", "Hit", "SearchIndex"]


@dataclass(frozen=True, slots=True)
class Document:
    """One message: its seq in its Session's log and its text."""

    seq: int
    text: str


@dataclass(frozen=True, slots=True)
class Hit:
    """A message that matched: where, what it says, how well (lower is better)."""

    session_id: str
    seq: int
    text: str
    rank: float


class SearchIndex(abc.ABC):
    """The words of stored messages (see the module docstring)."""

    description: str = "the search index"
    #: True when it outlives the process (then the Host catches it up with the logs at start).
    persistent: bool = False

    async def open(self) -> None:
        """Load or create it (a broken one is moved aside and started empty)."""
        return None

    @abc.abstractmethod
    async def through(self) -> dict[str, int]:
        """How far each indexed Session was indexed (rule 2)."""

    @abc.abstractmethod
    async def add(self, session_id: str, documents: Sequence[Document], through: int) -> None:
        """Index `documents` of the Session and move its `through` forward to `through`."""

    @abc.abstractmethod
    async def forget(self, session_id: str) -> None:
        """Drop everything indexed of the Session."""

    @abc.abstractmethod
    async def search(self, query: Query, limit: int) -> list[Hit]:
        """The best-ranked messages matching `query`, best first, at most `limit`."""

    @abc.abstractmethod
    async def clear(self) -> None:
        """Forget everything (before a rebuild)."""

    async def aclose(self) -> None:
        return None
