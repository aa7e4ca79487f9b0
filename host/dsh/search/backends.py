"""Which search index goes with which Session store.

`JsonlBackend(DIR)` keeps it in `DIR/search.sqlite`, caught up with the logs at
each start. Any other store (`memory:`, PostgreSQL, a test's) gets one in
memory that holds what this host stored since it started: message text
stored earlier, or by another host of the database, is not found there (the
title and first message of every Session are, as before).
"""

from __future__ import annotations

from ..persistence.backend import Backend
from ..persistence.jsonl import JsonlBackend
from .index import SearchIndex
from .sqlite import SqliteSearchIndex

__all__ = ["search_index_for"]


def search_index_for(backend: Backend) -> SearchIndex:
    """A new search index beside `backend`'s logs (see the module docstring)."""
    if isinstance(backend, JsonlBackend):
        return SqliteSearchIndex(backend.data_dir)
    return SqliteSearchIndex(None)
