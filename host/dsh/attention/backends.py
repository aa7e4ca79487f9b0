"""Which attention store goes with which Session store: beside the logs it is about.

`JsonlBackend(DIR)` keeps it in `DIR/attention.jsonl`, a `PostgresBackend`
in the tables every host of its database shares (on the backend's own
connections), any other backend (`memory:`, a test's) in memory.
"""

from __future__ import annotations

import sys

from ..persistence.backend import Backend
from ..persistence.jsonl import JsonlBackend
from .backend import AttentionBackend, MemoryAttentionBackend
from .jsonl import JsonlAttentionBackend

__all__ = ["attention_backend_for"]


def attention_backend_for(backend: Backend) -> AttentionBackend:
    """A new attention store beside `backend`'s logs (see the module docstring)."""
    if isinstance(backend, JsonlBackend):
        return JsonlAttentionBackend(backend.data_dir)
    # Only a backend of that module can be one: psycopg is an optional dependency.
    postgres = sys.modules.get("dsh.persistence.postgres.backend")
    if postgres is not None and isinstance(backend, postgres.PostgresBackend):
        from .postgres import PostgresAttentionBackend

        return PostgresAttentionBackend(backend)
    return MemoryAttentionBackend()
