"""`StorageLocation`: where a Host keeps its Sessions, for a plugin that keeps records beside them.

A plugin with durable records of its own (an outbox, a key pair) keeps them
where the Host keeps its logs, so that a backup, a `dsh store copy` or a
second host of the same database finds them together:

- `jsonl`: `data_dir` is the data directory (already owned by this user,
  0700, and locked by the running `dsh web`); a plugin writes its own files
  there, never a log's;
- `postgresql`: `url` is the libpq URL the Host connects with (it may carry a
  password: never log it, `redacted_url` is for messages) and `schema` the
  schema its tables live in; a plugin opens its own connections and keeps
  its own tables, whose names start with the plugin's;
- `memory`: nothing outlives the process (tests, `memory:`), so neither do
  the plugin's records.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .backend import Backend
from .jsonl import JsonlBackend
from .redact import redacted

__all__ = ["StorageLocation", "location_of"]


@dataclass(frozen=True, slots=True)
class StorageLocation:
    """Where the Host's Sessions are kept (see the module docstring)."""

    kind: Literal["jsonl", "postgresql", "memory"] = "memory"
    data_dir: Path | None = None
    url: str | None = None
    schema: str | None = None

    @property
    def redacted_url(self) -> str | None:
        """`url` without its password, for messages."""
        return None if self.url is None else redacted(self.url)


def location_of(backend: Backend) -> StorageLocation:
    """Where `backend` keeps its logs; a backend of any other kind is `memory`."""
    if isinstance(backend, JsonlBackend):
        return StorageLocation("jsonl", data_dir=Path(backend.data_dir))
    # Only a backend of that module can be one: psycopg is an optional dependency.
    postgres = sys.modules.get("dsh.persistence.postgres.backend")
    if postgres is not None and isinstance(backend, postgres.PostgresBackend):
        settings = backend.settings
        return StorageLocation("postgresql", url=settings.url, schema=settings.schema_name)
    return StorageLocation()
