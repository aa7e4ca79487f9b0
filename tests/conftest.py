from __future__ import annotations

import pytest


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
