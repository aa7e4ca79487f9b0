from __future__ import annotations

import signal
import uuid
from collections.abc import Iterator

import pytest

from tests.support.leaks import reported_leaks
from tests.support.postgres import PostgresServer, running_postgres


@pytest.fixture(autouse=True)
def _no_leaked_resources() -> Iterator[None]:
    """A socket or file a test leaves to the garbage collector fails that test (`support.leaks`)."""
    with reported_leaks():
        yield


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--long`: the reliability soak (tests/reliability multiplies rounds and examples)."""
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="reliability soak: ten times the crash rounds, faults, examples and fuzz cases",
    )


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the whole test run (`tests/support/postgres.py`),
    stopped and removed at the end even when tests failed, or the run was stopped
    with SIGTERM (a `timeout`): that becomes an interrupt, so teardown runs."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        with running_postgres() as server:
            yield server
    finally:
        signal.signal(signal.SIGTERM, previous)


@pytest.fixture
def pg_url(postgres: PostgresServer) -> str:
    """A store URL of a schema of its own: every test starts with an empty store."""
    return f"{postgres.url}&schema=t_{uuid.uuid4().hex[:16]}"
