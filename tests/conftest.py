from __future__ import annotations

import json
import os
import secrets
import signal
import uuid
from collections.abc import Iterator

import pytest

from tests.reliability.figures import FIGURES_PATH, REPO, SEED_ENV, Figures
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


#: Tests that take longest run first, so that `pytest -n N` (pytest-xdist) never ends
#: with one worker left alone on a long test: the heavier the marker, the earlier.
_WEIGHT = {"crash": 5, "lane": 4, "process": 3, "reliability": 3, "browser": 2, "pg": 1}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the run heaviest first (a stable sort: the file order stays within a weight)."""

    def weight(item: pytest.Item) -> int:
        return max((_WEIGHT.get(mark.name, 0) for mark in item.iter_markers()), default=0)

    items.sort(key=weight, reverse=True)


def _is_xdist_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput") and bool(getattr(config.option, "numprocesses", 0))


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, one reliability seed for every worker (they inherit the
    environment), and no figures left from an earlier run to be gathered again."""
    if _is_xdist_controller(config):
        os.environ.setdefault(SEED_ENV, str(secrets.randbits(32)))
        for stale in FIGURES_PATH.parent.glob("figures-*.json"):
            stale.unlink()


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """The controller of an xdist run gathers the workers' reliability figures."""
    if not _is_xdist_controller(config):
        return
    parts = sorted(FIGURES_PATH.parent.glob("figures-*.json"))
    if not parts:
        return
    figures = Figures.gathered([json.loads(part.read_text("utf-8")) for part in parts])
    figures.write(FIGURES_PATH)
    for part in parts:
        part.unlink()
    terminalreporter.section("reliability figures")
    for line in figures.summary():
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"written to {FIGURES_PATH.relative_to(REPO)}")
