"""Who may talk to the web host, and the headers every response carries (DESIGN §11).

`AccessGuard` is the outermost ASGI middleware of the app. In order:

1. **Host allowlist, on every request** (HTTP and WebSocket, static files
   too): the `Host` header must name the bind host, `127.0.0.1`,
   `localhost` or `[::1]` on the port the server really listens on, or one of
   the configured extras. Anything else is a DNS-rebinding attempt (a hostile
   page whose name now resolves to loopback) and gets 421 `host_not_allowed`.
2. **Token on `/api`, `/metrics` and every WebSocket**: HTTP requests carry
   `Authorization: Bearer <token>`; WebSockets carry it as the `token` query
   parameter (browsers cannot set headers on a WebSocket) or the same
   header. Comparison is constant-time.
   Missing or wrong: HTTP 401 `unauthorized`; a WebSocket is refused before
   it is accepted. Each such failure counts against the client's address
   (`throttle.AuthThrottle`): after 20 in a minute, that address's token
   requests are answered 429 `too_many_failures` with `Retry-After`, without
   looking at the token, until the minute is over.
3. **Origin on WebSockets**: a browser always sends `Origin`; it must be the
   served origin (`http://<Host>`), so another site's page cannot open the
   live stream even if it learnt the token. A client that sends no Origin is
   not a browser and is judged by its token alone.
4. **Security headers on every HTTP response**: a Content-Security-Policy
   that allows only this origin (and its own WebSocket origin, spelled out
   because older Safari does not read `'self'` as covering `ws:`), nosniff,
   `Referrer-Policy: no-referrer` (the page URL carries the token), framing
   denied; `/api` responses are also `Cache-Control: no-store`.

Static client files (`/`, `/static/*`, `/plugins/*`) do not need the token:
they are the same public code for everyone and contain no Session data or
secrets, and a browser must be able to load the page before it can read the
token from its URL. They are still behind the Host allowlist.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import deny_websocket, error_response
from .settings import WebSettings

if TYPE_CHECKING:
    from .throttle import AuthThrottle

__all__ = ["AccessGuard", "AccessPolicy", "presented_token", "split_host"]

API_PREFIX = "/api"
METRICS_PATH = "/metrics"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
DEFAULT_PORTS = {"http": 80, "ws": 80, "https": 443, "wss": 443}


def split_host(value: str, default_port: int) -> tuple[str, int] | None:
    """`(name, port)` of a Host header value (`name`, `name:port`, `[v6]:port`), or None.

    Names are lower-cased; IPv6 literals keep their brackets.
    """
    value = value.strip().lower()
    if not value:
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[: end + 1], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else ""
    elif ":" in value:
        name, _, port_text = value.partition(":")
    else:
        name, port_text = value, ""
    if not port_text:
        return name, default_port
    if not port_text.isdigit() or len(port_text) > 5:
        return None
    return name, int(port_text)


def _bracketed(host: str) -> str:
    host = host.strip().lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class AccessPolicy:
    """The allowlist and the token of one web host."""

    def __init__(self, settings: WebSettings) -> None:
        self._token = settings.token.encode("utf-8", "surrogatepass")
        self._names = {_bracketed(settings.host), *LOOPBACK_NAMES}
        self._fallback_port = settings.port
        self._extras: list[tuple[str, int | None]] = []
        for extra in settings.allowed_hosts:
            parsed = split_host(extra, -1)
            if parsed is None:
                raise ValueError(f"invalid allowed host {extra!r}; expected name or name:port")
            name, port = parsed
            self._extras.append((name, None if port == -1 else port))

    def host_allowed(self, host_header: str | None, scheme: str, server_port: int | None) -> bool:
        """True when `host_header` names this server (see the module docstring)."""
        if host_header is None:
            return False
        parsed = split_host(host_header, DEFAULT_PORTS.get(scheme, 80))
        if parsed is None:
            return False
        name, port = parsed
        real_port = server_port if server_port is not None else self._fallback_port
        if name in self._names and port == real_port:
            return True
        return any(
            name == extra and (extra_port is None or extra_port == port)
            for extra, extra_port in self._extras
        )

    def token_ok(self, presented: str | None) -> bool:
        """Constant-time comparison with the configured token.

        Header values arrive as latin-1 text. A browser sends a token's
        characters as latin-1 bytes (so the text is the token), other clients
        send UTF-8 (so the text's latin-1 bytes are the token's UTF-8): both
        readings are compared, always both, so the time taken does not tell
        which one matched.
        """
        if presented is None:
            return False
        as_text = hmac.compare_digest(presented.encode("utf-8", "surrogatepass"), self._token)
        try:
            raw = presented.encode("latin-1")
        except UnicodeEncodeError:
            raw = b""  # not a header's text (a decoded query value): the first reading decides
        as_bytes = hmac.compare_digest(raw, self._token)
        return as_text | as_bytes

    @staticmethod
    def origin_ok(origin: str | None, host_header: str, scheme: str) -> bool:
        """True when `origin` is absent (not a browser) or is this server's own origin."""
        if origin is None:
            return True
        served = "https" if scheme in ("https", "wss") else "http"
        return origin.strip().lower() == f"{served}://{host_header.strip().lower()}"


def bearer_token(headers: Headers) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    value = headers.get("authorization")
    if value is None:
        return None
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def query_token(query_string: bytes) -> str | None:
    """The value of the first `token` query parameter, or None."""
    for key, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        if key == "token":
            return value
    return None


def presented_token(headers: Headers, query_string: bytes) -> str | None:
    """The token a request presents: its `token` query parameter, else its bearer token."""
    return query_token(query_string) or bearer_token(headers)


def _is_api(path: str) -> bool:
    return path == API_PREFIX or path.startswith(API_PREFIX + "/")


def _needs_token(path: str) -> bool:
    """`/api` and `/metrics` (whose counts say who uses the host and when)."""
    return _is_api(path) or path == METRICS_PATH


def security_headers(path: str, ws_origin: str | None) -> Iterable[tuple[bytes, bytes]]:
    """The headers every HTTP response carries (`ws_origin`: this server's `ws://host`)."""
    connect = "'self'" if ws_origin is None else f"'self' {ws_origin}"
    policy = (
        f"default-src 'self'; connect-src {connect}; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
    yield b"content-security-policy", policy.encode("latin-1")
    yield b"x-content-type-options", b"nosniff"
    yield b"referrer-policy", b"no-referrer"
    yield b"x-frame-options", b"DENY"
    yield b"cross-origin-opener-policy", b"same-origin"
    yield b"cross-origin-resource-policy", b"same-origin"
    if _is_api(path):
        yield b"cache-control", b"no-store"


def _client(scope: Scope) -> str | None:
    client = scope.get("client")
    return str(client[0]) if client else None


def _too_many(retry_after: int) -> tuple[str, str, dict[str, str]]:
    return (
        "too_many_failures",
        f"too many failed attempts with a wrong access token from this address; "
        f"try again in {retry_after} s",
        {"Retry-After": str(retry_after)},
    )


class AccessGuard:
    """ASGI middleware enforcing `AccessPolicy` and adding security headers.

    `throttle` counts failed authentication (default: a new `AuthThrottle`).
    """

    def __init__(
        self, app: ASGIApp, policy: AccessPolicy, throttle: AuthThrottle | None = None
    ) -> None:
        # Imported here: the throttle's log summary lives in `connections`, whose
        # protocol imports this module.
        from .throttle import AuthThrottle

        self.app = app
        self.policy = policy
        self.throttle = throttle or AuthThrottle()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def _host_of(self, scope: Scope, headers: Headers) -> str | None:
        host = headers.get("host")
        server = scope.get("server")
        server_port = server[1] if server else None
        if self.policy.host_allowed(host, scope.get("scheme", "http"), server_port):
            return host
        return None

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        path: str = scope["path"]
        host = self._host_of(scope, headers)
        ws_scheme = "wss" if scope.get("scheme") == "https" else "ws"
        extra = list(security_headers(path, None if host is None else f"{ws_scheme}://{host}"))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [
                    *message.get("headers", []),
                    *((name, value) for name, value in extra if name not in present),
                ]
            await send(message)

        if host is None:
            response = error_response(
                421, "host_not_allowed", "this server does not answer to that Host header"
            )
            await response(scope, receive, send_with_headers)
            return
        if _needs_token(path) and (wait := self.throttle.retry_after(_client(scope))) is not None:
            code, message, retry = _too_many(wait)
            await error_response(429, code, message, retry)(scope, receive, send_with_headers)
            return
        if _needs_token(path) and not self.policy.token_ok(bearer_token(headers)):
            self.throttle.failed(_client(scope))
            response = error_response(
                401,
                "unauthorized",
                "missing or wrong access token; send Authorization: Bearer <token>",
                headers={"WWW-Authenticate": "Bearer"},
            )
            await response(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        host = self._host_of(scope, headers)
        if host is None:
            await deny_websocket(
                send, scope, 421, "host_not_allowed", "this server does not answer to that Host"
            )
            return
        wait = self.throttle.retry_after(_client(scope))
        if wait is not None:
            code, message, retry = _too_many(wait)
            await deny_websocket(send, scope, 429, code, message, retry)
            return
        presented = presented_token(headers, scope.get("query_string", b""))
        if not self.policy.token_ok(presented):
            self.throttle.failed(_client(scope))
            await deny_websocket(send, scope, 401, "unauthorized", "missing or wrong access token")
            return
        if not self.policy.origin_ok(headers.get("origin"), host, scope.get("scheme", "ws")):
            await deny_websocket(
                send, scope, 403, "origin_not_allowed", "the Origin is not this server's"
            )
            return
        await self.app(scope, receive, send)
