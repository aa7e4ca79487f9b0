"""HTTP and WebSocket requests sent exactly as written, for attacks a normal client would tidy.

`httpx` and `websockets` normalise what they send (dot segments, the Host
header from the URL, percent-encoding); an attacker's client does not.
`raw_request` writes the request line and headers verbatim through
`http.client`; `ws_handshake` sends a WebSocket upgrade the same way and
returns the status the server answered (101 means accepted). Both take a
`source` address (any of 127.0.0.0/8 on loopback) to speak as another client.
"""

from __future__ import annotations

import base64
import http.client
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["RawResponse", "raw_request", "ws_handshake"]


@dataclass(frozen=True)
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def _connection(base_url: str, source: str | None = None) -> http.client.HTTPConnection:
    parts = urlsplit(base_url)
    assert parts.hostname is not None and parts.port is not None
    bind = None if source is None else (source, 0)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=15, source_address=bind)


def raw_request(
    base_url: str,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    *,
    host: str | None = None,
    source: str | None = None,
) -> RawResponse:
    """Send `method path` verbatim, with `host` as the Host header (None: the real one),
    from the address `source` (None: any)."""
    connection = _connection(base_url, source)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", urlsplit(base_url).netloc if host is None else host)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        with connection.getresponse() as response:
            return RawResponse(
                response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
            )
    finally:
        connection.close()


def ws_handshake(
    base_url: str,
    path: str,
    headers: dict[str, str] | None = None,
    *,
    host: str | None = None,
    source: str | None = None,
) -> RawResponse:
    """A WebSocket upgrade of `path`; status 101 means the server accepted it."""
    key = base64.b64encode(os.urandom(16)).decode()
    upgrade = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": key,
        "Sec-WebSocket-Version": "13",
        **(headers or {}),
    }
    connection = _connection(base_url, source)
    try:
        connection.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", urlsplit(base_url).netloc if host is None else host)
        for name, value in upgrade.items():
            connection.putheader(name, value)
        connection.endheaders()
        # An accepted upgrade has no body to read: the response is closed unread.
        with connection.getresponse() as response:
            headers_ = {k.lower(): v for k, v in response.getheaders()}
            body = b"" if response.status == 101 else response.read()
            return RawResponse(response.status, headers_, body)
    finally:
        connection.close()
