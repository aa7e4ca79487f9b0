from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.leaks import reported_leaks


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
