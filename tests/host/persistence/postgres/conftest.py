"""What the PostgreSQL tests share: a backend on a schema of its own, migrated."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from dsh.persistence.postgres import PostgresBackend

from .test_backend import backend_for


@pytest.fixture
async def backend(pg_url: str) -> AsyncIterator[PostgresBackend]:
    backend = backend_for(pg_url)
    await backend.prepare()
    yield backend
    await backend.aclose()
