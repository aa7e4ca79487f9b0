"""The PostgreSQL backend keeps the one backend contract, on a real server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh.persistence import Backend
from dsh.persistence.postgres import PostgresBackend
from dsh.persistence.stores import choose_store

from ..contract import BackendContract

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


def backend_for(url: str) -> PostgresBackend:
    """The backend `--store url` opens."""
    backend = choose_store(url, Path("/nonexistent"), environ={}).open()
    assert isinstance(backend, PostgresBackend)
    return backend


class TestPostgresBackendContract(BackendContract):
    @pytest.fixture
    async def backend(self, pg_url: str) -> AsyncIterator[Backend]:
        self.opened: list[Backend] = []
        backend = backend_for(pg_url)
        yield backend
        for other in [backend, *self.opened]:
            await other.aclose()

    async def reopen(self, backend: Backend) -> Backend:
        assert isinstance(backend, PostgresBackend)
        again = PostgresBackend(backend.settings)
        self.opened.append(again)
        return again
