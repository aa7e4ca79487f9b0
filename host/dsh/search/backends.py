"""Which search index goes with which Session store.

`JsonlBackend(DIR)` keeps it in `DIR/search.sqlite`, a `PostgresBackend` in
tables every host of its database shares (`dsh.search.postgres`); both are
caught up with the logs at each start. Any other store (`memory:`, a test's)
gets one in memory that holds what this host stored since it started.
"""

from __future__ import annotations

import sys

from ..persistence.backend import Backend
from ..persistence.jsonl import JsonlBackend
from .index import SearchIndex
from .sqlite import SqliteSearchIndex

__all__ = ["search_index_for"]


def search_index_for(backend: Backend) -> SearchIndex:
    """A new search index beside `backend`'s logs (see the module docstring)."""
    if isinstance(backend, JsonlBackend):
        return SqliteSearchIndex(backend.data_dir)
    # Only a backend of that module can be one: psycopg is an optional dependency.
    postgres = sys.modules.get("dsh.persistence.postgres.backend")
    if postgres is not None and isinstance(backend, postgres.PostgresBackend):
        from .postgres import PostgresSearchIndex

        return PostgresSearchIndex(backend)
    return SqliteSearchIndex(None)
