"""The pytest plugin `dsh-host` registers (entry point `pytest11`: `dsh`): async tests just work.

It lives outside the `dsh` package and imports dsh only inside a fixture:
pytest imports entry-point plugins before coverage starts, and importing
`dsh` there would hide every module-level line of it from coverage.

With dsh installed, a plugin's test suite needs no conftest:

- every `async def` test runs on anyio (it is marked `anyio` and asks for the
  `anyio_backend` fixture; anyio's own pytest plugin runs it);
- `anyio_backend` is `"asyncio"` (override the fixture to run on trio too);
- the `dsh_strict` fixture is a `dsh.testing.Strict` watching for the whole
  test: a tool or hook that raised, contained by any Host, fails the test
  when it ends, with the traceback.

A suite that defines its own `anyio_backend` or marks its tests keeps doing so;
one that runs its async tests with another plugin (pytest-asyncio) turns this
one off with `-p no:dsh`.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from dsh.testing import Strict

__all__ = ["anyio_backend", "dsh_strict", "pytest_pycollect_makeitem"]


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: Any) -> None:
    """Mark each coroutine test function for anyio before anyio's plugin looks at it."""
    if not (
        isinstance(collector, pytest.Module | pytest.Class) and collector.istestfunction(obj, name)
    ):
        return
    inner = getattr(getattr(obj, "hypothesis", None), "inner_test", obj)
    if not inspect.iscoroutinefunction(inner):
        return
    if not any(mark.name == "anyio" for mark in getattr(obj, "pytestmark", ())):
        pytest.mark.anyio(obj)
    pytest.mark.usefixtures("anyio_backend")(obj)


@pytest.fixture
def anyio_backend() -> str:
    """The event loop async tests run on: asyncio."""
    return "asyncio"


@pytest.fixture
def dsh_strict() -> Iterator[Strict]:
    """Fail the test if a tool or hook raised during it (see `dsh.testing.Strict`)."""
    from dsh.testing import Strict

    strict = Strict()
    with strict.watching():
        yield strict
    strict.check()
