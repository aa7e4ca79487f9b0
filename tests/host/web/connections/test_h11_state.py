"""What dsh reads of uvicorn's HTTP/1.1 protocol, read from a real one: a uvicorn that
keeps its state differently fails here, loudly, not in a user's `dsh web`."""

from __future__ import annotations

import asyncio
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from packaging.requirements import Requirement
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from dsh.web.connections import h11_state

REPO = Path(__file__).resolve().parents[4]


class Transport(asyncio.Transport):
    """Enough of a transport for a protocol that reads and never answers."""

    def __init__(self) -> None:
        super().__init__()
        self.closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 8765)}.get(name)

    def is_closing(self) -> bool:
        return self.closing

    def write(self, data: bytes | bytearray | memoryview) -> None:
        return None

    def pause_reading(self) -> None:
        return None

    def resume_reading(self) -> None:
        return None

    def close(self) -> None:
        self.closing = True


async def never_called(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("the request is never complete here")


def protocol() -> H11Protocol:
    config = Config(app=never_called, log_config=None)
    made = H11Protocol(config, ServerState(), {}, _loop=asyncio.get_running_loop())
    made.connection_made(Transport())
    return made


@pytest.mark.anyio
async def test_the_phase_the_partial_head_and_the_scope_are_read_from_a_real_protocol() -> None:
    http = protocol()
    h11_state.check(http)
    assert (h11_state.phase(http), h11_state.head_started(http)) == ("head", False)
    assert h11_state.request_scope(http) is None

    http.data_received(b"POST /api/x HTTP/1.1\r\nHost: a")
    assert (h11_state.phase(http), h11_state.head_started(http)) == ("head", True)

    http.data_received(b"\r\nContent-Length: 5\r\n\r\nab")
    assert h11_state.phase(http) == "body"
    scope = h11_state.request_scope(http)
    assert scope is not None and scope["path"] == "/api/x"
    http.connection_lost(None)


def test_a_server_that_keeps_its_state_elsewhere_is_refused_naming_its_version() -> None:
    class Renamed:
        parser = None

    with pytest.raises(h11_state.IncompatibleServer) as refused:
        h11_state.check(Renamed())  # type: ignore[arg-type]
    assert f"uvicorn {uvicorn.__version__}'s H11Protocol has no conn" in str(refused.value)
    assert "scope, loop" in str(refused.value)


@pytest.mark.parametrize("name", ["uvicorn", "h11", "pluggy"])
def test_the_installed_version_is_one_the_pyproject_allows(name: str) -> None:
    # These three are read beyond their documented API (uvicorn's and h11's parser state,
    # pluggy's order of implementations): pinned to the minor version the suite passes on.
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = next(
        Requirement(line)
        for line in pyproject["project"]["dependencies"]
        if Requirement(line).name == name
    )
    assert wanted.specifier.contains(metadata.version(name)), wanted
    assert any(spec.operator == "<" for spec in wanted.specifier), f"{name} needs an upper bound"
