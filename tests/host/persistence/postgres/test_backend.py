"""The PostgreSQL backend keeps the one backend contract, on a real server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dsh.persistence import Backend
from dsh.persistence.backends import choose_backend
from dsh.persistence.errors import CorruptLog, IntegrityError, SessionNotFound, StorageError
from dsh.persistence.postgres import PostgresBackend

from ..contract import BackendContract, events, header

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


def backend_for(url: str) -> PostgresBackend:
    """The backend `--store url` opens."""
    backend = choose_backend(url, Path("/nonexistent"), environ={}).open()
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


@pytest.fixture
async def stored(pg_url: str) -> AsyncIterator[PostgresBackend]:
    backend = backend_for(pg_url)
    await backend.initialize(header(), events(0, 3))
    yield backend
    await backend.aclose()


async def sql(backend: PostgresBackend, statement: str) -> None:
    async with backend.database.connection() as connection:
        await connection.execute(statement)


async def test_a_row_that_is_not_an_event_is_a_corrupt_log_naming_its_seq(
    stored: PostgresBackend,
) -> None:
    await sql(stored, 'UPDATE events SET body = \'{"seq": 1, "oops": true}\' WHERE seq = 1')
    with pytest.raises(CorruptLog, match=r"session s1: line 1: invalid event") as info:
        await stored.read("s1")
    assert info.value.line == 1 and "postgresql://" in info.value.path
    assert await stored.read("s1", 2) == events(2, 3)  # the rest still reads
    with pytest.raises(CorruptLog):
        await stored.inspect("s1")


async def test_an_event_stored_under_another_seq_is_corrupt(stored: PostgresBackend) -> None:
    body = events(0, 1)[0].to_json()
    await sql(stored, f"UPDATE events SET body = '{body}' WHERE seq = 2")
    with pytest.raises(CorruptLog, match="the event stored as seq 2 has seq 0"):
        await stored.read("s1", 2)


async def test_a_header_that_does_not_parse_is_corrupt(stored: PostgresBackend) -> None:
    await sql(stored, "UPDATE sessions SET header = '{}'")
    with pytest.raises(CorruptLog, match="line 0: invalid header"):
        await stored.header("s1")
    assert await stored.cursor("s1") == 3  # counting decodes nothing


async def test_a_write_that_fails_for_another_reason_names_the_session_and_the_store(
    stored: PostgresBackend,
) -> None:
    await sql(stored, "ALTER TABLE events ADD CONSTRAINT short CHECK (seq < 3) NOT VALID")
    with pytest.raises(StorageError, match=r"^PostgreSQL at .* did not store session s1: ") as info:
        await stored.append("s1", events(3, 4))
    assert not isinstance(info.value, IntegrityError | SessionNotFound)
    assert await stored.cursor("s1") == 3


async def test_an_empty_batch_for_an_unknown_session_is_refused(stored: PostgresBackend) -> None:
    with pytest.raises(SessionNotFound, match="s2"):
        await stored.append("s2", [])


async def test_the_header_and_events_are_kept_as_their_canonical_json(
    stored: PostgresBackend,
) -> None:
    async with stored.database.connection() as connection:
        cursor = await connection.execute("SELECT header FROM sessions")
        row = await cursor.fetchone()
        assert row is not None and row[0] == header().canonical().to_json()
        cursor = await connection.execute("SELECT body FROM events ORDER BY seq")
        assert [body for (body,) in await cursor.fetchall()] == [
            event.to_json() for event in events(0, 3)
        ]


async def test_a_second_read_of_an_unchanged_log_is_remembered_until_it_changes(
    stored: PostgresBackend,
) -> None:
    first = await stored.inspect("s1")
    assert first is not None and await stored.inspect("s1") is first
    await stored.append("s1", events(3, 4))
    again = await stored.inspect("s1")
    assert again is not first and again is not None and len(again.events) == 4
    await stored.release("s1")
    assert await stored.inspect("s1") is not again  # released: read afresh
    for number in range(6):  # only a few are kept
        await stored.initialize(header(f"x{number}"), events(0, 1))
        await stored.inspect(f"x{number}")
    assert len(stored._inspected) == 4
