"""Migrations: applied once under an advisory lock, however many hosts start at once."""

from __future__ import annotations

import socket
from pathlib import Path

import anyio
import pytest

from dsh.persistence.errors import StorageError
from dsh.persistence.postgres import SCHEMA_VERSION, Database, schema
from dsh.session.event import SessionEvent
from dsh.session.log import Session

from .test_backend import backend_for

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


async def test_concurrent_starts_migrate_once_and_all_find_the_same_version(pg_url: str) -> None:
    backends = [backend_for(pg_url) for _ in range(6)]
    results: list[str] = []

    async def start(index: int) -> None:
        results.append(await backends[index].prepare())

    async with anyio.create_task_group() as group:
        for index in range(len(backends)):
            group.start_soon(start, index)
    assert sum("migrated from version 0" in line for line in results) == 1
    assert sum("is up to date" in line for line in results) == 5
    async with backends[0].database.connection() as connection:
        cursor = await connection.execute("SELECT version FROM migrations ORDER BY version")
        assert [row[0] for row in await cursor.fetchall()] == list(range(1, SCHEMA_VERSION + 1))
    for backend in backends:
        await backend.aclose()


async def test_a_version_4_store_keeps_its_logs_and_writes_through_version_5(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def event(seq: int) -> SessionEvent:
        return SessionEvent(seq=seq, type="message/user", time=seq, data={"text": f"m{seq}"})

    older = backend_for(pg_url)
    with monkeypatch.context() as patch:
        patch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:4])
        patch.setattr(schema, "SCHEMA_VERSION", 4)
        await older.prepare()
        header = Session.new("s1", cwd="/", created_at=0).header
        await older.initialize(header, [event(0)])
        await older.append("s1", [event(1), event(2)])
    await older.aclose()

    newer = backend_for(pg_url)
    assert f"migrated from version 4 to {SCHEMA_VERSION}" in await newer.prepare()
    await newer.append("s1", [event(3)])
    assert [e.data["text"] for e in await newer.read("s1")] == ["m0", "m1", "m2", "m3"]
    await newer.initialize(Session.new("s2", cwd="/", created_at=0).header, [event(0), event(1)])
    assert await newer.cursor("s2") == 2
    async with newer.database.connection() as connection:
        cursor = await connection.execute(
            "SELECT count(*) FROM pg_proc WHERE proname = 'dsh_insert_events'"
        )
        assert await cursor.fetchone() == (0,)  # what version 5 replaced is gone
    await newer.aclose()


async def test_a_database_newer_than_this_dsh_is_refused_not_downgraded(pg_url: str) -> None:
    backend = backend_for(pg_url)
    await backend.prepare()
    async with backend.database.connection() as connection:
        await connection.execute("INSERT INTO migrations (version, summary) VALUES (99, 'later')")
    await backend.aclose()
    again = backend_for(pg_url)
    with pytest.raises(
        StorageError,
        match=rf"at version 99, newer than this dsh .version {SCHEMA_VERSION}.; upgrade",
    ):
        await again.cursor("s1")
    await again.aclose()


async def test_the_first_use_migrates_and_a_closed_backend_opens_again(pg_url: str) -> None:
    backend = backend_for(pg_url)
    assert await backend.cursor("s1") is None  # no `prepare` needed first
    assert backend.database.migrated == (0, SCHEMA_VERSION)
    await backend.aclose()
    await backend.aclose()
    assert await backend.list() == []
    await backend.aclose()


async def test_a_server_that_goes_away_mid_use_is_a_storage_error_naming_it(
    pg_url: str, postgres: object
) -> None:
    backend = backend_for(pg_url)
    assert await backend.list() == []
    async with backend.database.connection() as connection:
        await connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE pid <> pg_backend_pid() AND datname = current_database()"
            " AND application_name = ''"
        )
    # The pool notices broken connections and replaces them; a query on one that
    # broke under it fails as a StorageError naming the store, never a psycopg error.
    for _ in range(3):
        try:
            await backend.list()
        except StorageError as error:
            assert str(error).startswith("PostgreSQL at postgresql://dsh@/dsh")
    assert await backend.list() == []
    await backend.aclose()


async def test_a_server_that_never_answers_is_named_with_the_wait(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as silent:  # accepts connections, never answers
        silent.bind(str(tmp_path / ".s.PGSQL.5432"))
        silent.listen()
        settings = backend_for(f"postgresql://me@/dsh?host={tmp_path}").settings
        with pytest.raises(StorageError, match=r"no answer within 1 s|timeout"):
            await Database(settings, connect_timeout=1).connect()
