"""Group commit on PostgreSQL: appends of several Sessions in one transaction (`rounds`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from dsh.persistence.backends import choose_backend
from dsh.persistence.errors import IntegrityError, LeaseLost, StorageError, StorageRefused
from dsh.persistence.postgres import PostgresBackend
from dsh.persistence.postgres import backend as postgres_backend
from dsh.session.event import SessionEvent

from ..contract import events, header

pytestmark = [pytest.mark.anyio, pytest.mark.pg]

IDS = [f"r{number:02d}" for number in range(12)]


def _backend(url: str) -> PostgresBackend:
    backend = choose_backend(url, Path("/nonexistent"), environ={}).open()
    assert isinstance(backend, PostgresBackend)
    return backend


@pytest.fixture
async def one_round(pg_url: str) -> AsyncIterator[PostgresBackend]:
    """A backend committing one round at a time, with `IDS` stored (3 events each)."""
    backend = _backend(pg_url)
    backend.rounds.in_flight = 1
    for session_id in IDS:
        await backend.initialize(header(session_id), events(0, 3))
    yield backend
    await backend.aclose()


async def _append_all(
    backend: PostgresBackend, batches: dict[str, list[SessionEvent]]
) -> dict[str, BaseException | None]:
    """Append every batch at once (each from its own task); each one's outcome."""
    outcomes: dict[str, BaseException | None] = {}

    async def one(session_id: str, batch: list[SessionEvent]) -> None:
        try:
            await backend.append(session_id, batch)
        except StorageError as error:
            outcomes[session_id] = error
        else:
            outcomes[session_id] = None

    with anyio.fail_after(60):  # a lost wake-up fails the test, never hangs the run
        async with anyio.create_task_group() as group:
            for session_id, batch in batches.items():
                group.start_soon(one, session_id, batch)
    return outcomes


async def test_appends_of_many_sessions_at_once_commit_together_and_read_back_in_order(
    one_round: PostgresBackend,
) -> None:
    # The first append is sent alone; the eleven that arrive while it commits go as one.
    outcomes = await _append_all(one_round, {sid: events(3, 6, sid=sid) for sid in IDS})

    assert outcomes == dict.fromkeys(IDS)
    assert (one_round.rounds.rounds, one_round.rounds.grouped) == (2, len(IDS) - 1)
    for session_id in IDS:
        assert await one_round.cursor(session_id) == 6
        assert await one_round.read(session_id, 3) == events(3, 6, sid=session_id)


async def test_an_append_a_round_refuses_fails_alone_and_the_others_are_stored(
    one_round: PostgresBackend,
) -> None:
    batches = {sid: events(3, 5) for sid in IDS}
    batches["r05"] = events(4, 6)  # does not continue at the stored cursor (3)

    outcomes = await _append_all(one_round, batches)

    refused = outcomes.pop("r05")
    assert isinstance(refused, IntegrityError) and "r05" in str(refused)
    assert outcomes == dict.fromkeys(IDS[:5] + IDS[6:])
    assert one_round.rounds.grouped == len(IDS) - 1
    assert await one_round.cursor("r05") == 3
    for session_id in outcomes:
        assert await one_round.cursor(session_id) == 5


async def test_every_append_in_a_round_is_fenced_by_its_own_lease(pg_url: str) -> None:
    backend = _backend(pg_url)
    backend.rounds.in_flight = 1
    leases = backend.lease_backend("host-a")
    try:
        for session_id in IDS:
            await leases.acquire(session_id)
            await backend.initialize(header(session_id), events(0, 3))
        async with backend.database.connection() as connection:  # another host took r07
            await connection.execute(
                "UPDATE leases SET owner = 'host-b', epoch = epoch + 1 WHERE session_id = 'r07'"
            )

        outcomes = await _append_all(backend, {sid: events(3, 4) for sid in IDS})

        lost = outcomes.pop("r07")
        assert isinstance(lost, LeaseLost) and "r07" in str(lost)
        assert outcomes == dict.fromkeys(IDS[:7] + IDS[8:])
        assert backend.rounds.grouped == len(IDS) - 1
        assert await backend.cursor("r07") == 3
    finally:
        await backend.aclose()


async def test_a_value_refused_before_sending_is_written_alone_and_refused_alone(
    one_round: PostgresBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Unguarded, a title holding NUL is refused by psycopg (`text` cannot hold it): the
    # round carrying it sends nothing, and each of its appends is then written alone.
    monkeypatch.setattr(postgres_backend, "shown", lambda text: text)
    batches = {sid: events(3, 4) for sid in IDS}
    batches["r03"] = [SessionEvent(seq=3, type="session/title", time=1, data={"title": "a\0b"})]

    outcomes = await _append_all(one_round, batches)

    refused = outcomes.pop("r03")
    assert isinstance(refused, StorageRefused) and "r03" in str(refused)
    assert outcomes == dict.fromkeys(IDS[:3] + IDS[4:])
    assert one_round.rounds.grouped == 0  # the round fell back to one append at a time
    assert await one_round.cursor("r03") == 3
    for session_id in outcomes:
        assert await one_round.cursor(session_id) == 4


async def test_a_round_the_server_fails_as_a_whole_fails_every_append_in_it(
    one_round: PostgresBackend,
) -> None:
    async with one_round.database.connection() as connection:
        await connection.execute("ALTER FUNCTION dsh_append_round RENAME TO dsh_append_round_gone")
    try:
        outcomes = await _append_all(one_round, {sid: events(3, 4) for sid in IDS})
    finally:
        async with one_round.database.connection() as connection:
            await connection.execute(
                "ALTER FUNCTION dsh_append_round_gone RENAME TO dsh_append_round"
            )

    first, *rest = IDS
    failed = [outcomes[session_id] for session_id in rest]
    assert all(isinstance(error, StorageError) for error in failed)
    assert "did not store the appends of 11 sessions" in str(failed[0])
    assert outcomes[first] is None  # sent alone before the others queued
    for session_id in rest:
        assert await one_round.cursor(session_id) == 3


async def test_an_append_failing_in_a_round_for_another_reason_names_its_session_and_state(
    one_round: PostgresBackend,
) -> None:
    async with one_round.database.connection() as connection:
        await connection.execute(
            "ALTER TABLE events ADD CONSTRAINT short CHECK (seq < 3) NOT VALID"
        )

    outcomes = await _append_all(one_round, {sid: events(3, 4) for sid in IDS})

    assert one_round.rounds.grouped == len(IDS) - 1
    for session_id, error in outcomes.items():
        assert isinstance(error, StorageError)
        assert not isinstance(error, IntegrityError | LeaseLost | StorageRefused)
        assert f"did not store session {session_id}" in str(error)
    assert "(SQLSTATE 23514)" in str(outcomes["r05"])


@pytest.mark.parametrize(("pool_size", "in_flight"), [(10, 5), (4, 2), (1, 1)])
def test_rounds_commit_on_at_most_half_the_pool(
    pg_url: str, pool_size: int, in_flight: int
) -> None:
    backend = _backend(f"{pg_url}&pool_size={pool_size}")
    assert backend.rounds.in_flight == in_flight
