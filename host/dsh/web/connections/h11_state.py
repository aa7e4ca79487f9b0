"""What `GuardedHttp` reads of uvicorn's HTTP/1.1 protocol, and nowhere else.

uvicorn's `H11Protocol` keeps the h11 connection it parses requests with in
`conn`, the request being read in `scope`, its transport in `transport` and
its event loop in `loop`. None of these is documented API, so every read of
them is here, behind three questions the deadlines ask:

- `phase(protocol)`: what the client owes now — `"head"` (a request line and
  headers: h11's `their_state` is `IDLE`), `"body"` (`SEND_BODY`), or None
  (the server owes the response);
- `head_started(protocol)`: whether part of a request head is buffered
  (h11's `trailing_data`);
- `request_scope(protocol)`: the ASGI scope of the request being read, or None.

pyproject pins uvicorn and h11 to the minor versions the suite passes on;
`check(protocol)` runs when a connection is made and raises
`IncompatibleServer`, naming the uvicorn version and what it lacks, on one
that changed these (tests/host/web/connections/test_h11_state.py reads them
from a real protocol, so such a version fails the suite before a user sees it).
"""

from __future__ import annotations

from typing import Any, Literal

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["IncompatibleServer", "Phase", "check", "head_started", "phase", "request_scope"]

Phase = Literal["head", "body"]


class IncompatibleServer(RuntimeError):
    """The installed uvicorn keeps its HTTP/1.1 state differently from the pinned one."""


def check(protocol: H11Protocol) -> None:
    """Raise `IncompatibleServer` unless `protocol` keeps what this module reads."""
    parser = getattr(protocol, "conn", None)
    kept = {
        "conn (an h11.Connection)": isinstance(parser, h11.Connection),
        "scope": hasattr(protocol, "scope"),
        "loop": hasattr(protocol, "loop"),
    }
    missing = [name for name, ok in kept.items() if not ok]
    if missing:
        raise IncompatibleServer(
            f"uvicorn {uvicorn.__version__}'s H11Protocol has no {', '.join(missing)}; "
            "dsh web needs the uvicorn version its pyproject.toml names"
        )


def phase(protocol: H11Protocol) -> Phase | None:
    """What the client owes now (see the module docstring)."""
    state = protocol.conn.their_state
    return "head" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None


def head_started(protocol: H11Protocol) -> bool:
    """Whether bytes of a request head that is not complete yet have arrived."""
    unprocessed, _ = protocol.conn.trailing_data
    return bool(unprocessed)


def request_scope(protocol: H11Protocol) -> dict[str, Any] | None:
    """The ASGI scope of the request the protocol is reading or answering, or None."""
    scope: dict[str, Any] | None = getattr(protocol, "scope", None)
    return scope
