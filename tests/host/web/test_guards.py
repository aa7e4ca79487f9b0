from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from dsh.web.guards import AccessGuard, AccessPolicy, bearer_token, split_host
from dsh.web.settings import WebSettings
from dsh.web.throttle import AuthThrottle

from .conftest import TOKEN

pytestmark = pytest.mark.anyio

API_ROUTES = [
    ("GET", "/api/health"),
    ("GET", "/api/sessions"),
    ("POST", "/api/sessions"),
    ("GET", "/api/sessions/abc"),
    ("POST", "/api/sessions/abc/resume"),
    ("POST", "/api/sessions/abc/fork"),
    ("POST", "/api/sessions/abc/messages"),
    ("GET", "/api/sessions/abc/events"),
    ("GET", "/api/client-modules"),
    ("GET", "/api/openapi.json"),
    ("GET", "/api/no-such-route"),
    ("GET", "/api"),
]


@pytest.mark.parametrize(("method", "path"), API_ROUTES)
@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": "Bearer "},
        {"Authorization": f"Bearer {TOKEN}x"},
    ],
    ids=["none", "wrong", "basic", "empty", "longer"],
)
async def test_every_api_route_needs_the_token(
    anonymous: httpx.AsyncClient, method: str, path: str, headers: dict[str, str]
) -> None:
    response = await anonymous.request(method, path, headers=headers, json={"text": "x"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert response.headers["www-authenticate"] == "Bearer"


async def test_a_token_in_the_query_string_does_not_open_http_routes(
    anonymous: httpx.AsyncClient,
) -> None:
    response = await anonymous.get("/api/health", params={"token": TOKEN})
    assert response.status_code == 401


async def test_the_bearer_scheme_is_case_insensitive(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.get("/api/health", headers={"Authorization": f"bearer {TOKEN}"})
    assert response.status_code == 200


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/api/health", "/nope", "/api/x"])
async def test_every_response_carries_the_security_headers(
    client: httpx.AsyncClient, path: str
) -> None:
    response = await client.get(path)
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp
    assert "connect-src 'self' ws://127.0.0.1:8765;" in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-frame-options"] == "DENY"


async def test_api_responses_are_not_cached_and_static_ones_revalidate(
    client: httpx.AsyncClient,
) -> None:
    assert (await client.get("/api/health")).headers["cache-control"] == "no-store"
    assert (await client.get("/static/app.js")).headers["cache-control"] == "no-cache"


@pytest.mark.parametrize(
    "host_header", ["127.0.0.1:8765", "localhost:8765", "LocalHost:8765", "[::1]:8765"]
)
async def test_loopback_names_on_the_real_port_are_allowed(
    client: httpx.AsyncClient, host_header: str
) -> None:
    response = await client.get("/api/health", headers={"Host": host_header})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "host_header",
    ["evil.example", "evil.example:8765", "127.0.0.1:9999", "127.0.0.1", "[::1", "x:y", " "],
)
@pytest.mark.parametrize("path", ["/api/health", "/", "/static/app.js", "/plugins/a/b.js"])
async def test_any_other_host_is_refused_with_421_even_for_static_files(
    client: httpx.AsyncClient, host_header: str, path: str
) -> None:
    response = await client.get(path, headers={"Host": host_header})
    assert response.status_code == 421
    assert response.json()["error"]["code"] == "host_not_allowed"
    assert "ws://" not in response.headers["content-security-policy"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("LOCALHOST", ("localhost", 80)),
        ("[::1]:8765", ("[::1]", 8765)),
        ("[::1]", ("[::1]", 80)),
        ("[::1]x", None),
        ("[::1", None),
        ("host:", ("host", 80)),
        ("host:99999999", None),
        ("host:8a", None),
        ("", None),
    ],
)
def test_split_host_reads_names_and_ports(value: str, expected: tuple[str, int] | None) -> None:
    assert split_host(value, 80) == expected


def policy(**changes: Any) -> AccessPolicy:
    return AccessPolicy(WebSettings(token=TOKEN, port=8765).model_copy(update=changes))


def test_extra_hosts_match_any_port_or_their_own() -> None:
    allowed = policy(allowed_hosts=("dsh.example", "proxy.example:443"))
    assert allowed.host_allowed("dsh.example:1234", "http", 8765)
    assert allowed.host_allowed("proxy.example", "https", 8765)
    assert not allowed.host_allowed("proxy.example:80", "http", 8765)
    assert not allowed.host_allowed(None, "http", 8765)


def test_an_invalid_extra_host_is_refused() -> None:
    with pytest.raises(ValueError, match="invalid allowed host"):
        policy(allowed_hosts=("[bad",))


def test_the_bind_host_is_allowed_and_ipv6_binds_are_bracketed() -> None:
    assert policy(host="192.168.1.5").host_allowed("192.168.1.5:8765", "http", 8765)
    assert policy(host="::1").host_allowed("[::1]:8765", "http", 8765)
    assert policy(host="fe80::1").host_allowed("[fe80::1]:8765", "http", 8765)


def test_without_a_server_address_the_configured_port_is_used() -> None:
    assert policy().host_allowed("localhost:8765", "http", None)
    assert not policy().host_allowed("localhost:8766", "http", None)


def test_origins_must_be_the_served_origin_when_present() -> None:
    assert AccessPolicy.origin_ok(None, "127.0.0.1:1", "ws")
    assert AccessPolicy.origin_ok("http://127.0.0.1:1", "127.0.0.1:1", "ws")
    assert AccessPolicy.origin_ok("https://127.0.0.1:1", "127.0.0.1:1", "wss")
    assert not AccessPolicy.origin_ok("https://127.0.0.1:1", "127.0.0.1:1", "ws")
    assert not AccessPolicy.origin_ok("http://evil.example", "127.0.0.1:1", "ws")
    assert not AccessPolicy.origin_ok("null", "127.0.0.1:1", "ws")


def test_token_comparison_refuses_missing_and_wrong_tokens() -> None:
    assert policy().token_ok(TOKEN)
    assert not policy().token_ok(None)
    assert not policy().token_ok("")
    assert not policy().token_ok("ünïcode")


@pytest.mark.parametrize("token", ["ünï©ødé", "emoji😀", "q'u\"o%t&e s"])
def test_a_token_matches_as_text_or_as_the_utf8_bytes_a_header_carries(token: str) -> None:
    guard = AccessPolicy(WebSettings(token=token))
    assert guard.token_ok(token)  # a query value, or a browser's latin-1 header
    assert guard.token_ok(token.encode().decode("latin-1"))  # a UTF-8 client's header
    assert not guard.token_ok(token[:-1])
    assert not guard.token_ok((token + "x").encode().decode("latin-1"))


async def test_a_utf8_bearer_token_opens_the_api() -> None:
    token = "ünï😀"

    async def answer(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    app = AccessGuard(answer, AccessPolicy(WebSettings(token=token)))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8765"
    ) as http:
        bearer = [(b"authorization", b"Bearer " + token.encode())]
        assert (await http.get("/api/health", headers=bearer)).status_code == 204
        refused = await http.get("/api/health", headers={"Authorization": "Bearer x"})
    assert refused.status_code == 401


def test_bearer_token_reads_only_the_bearer_scheme() -> None:
    from starlette.datastructures import Headers

    assert bearer_token(Headers({"authorization": f"Bearer  {TOKEN} "})) == TOKEN
    assert bearer_token(Headers({"authorization": "Token x"})) is None
    assert bearer_token(Headers({})) is None


# -- the WebSocket side, at the ASGI level --------------------------------


class Recorder:
    """An inner app that records whether the guard let the connection through."""

    def __init__(self) -> None:
        self.reached = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.reached = True


def ws_scope(
    *,
    query: bytes = b"token=" + TOKEN.encode(),
    host: str = "127.0.0.1:8765",
    origin: str | None = "http://127.0.0.1:8765",
    extensions: dict[str, Any] | None = None,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> Scope:
    raw = [(b"host", host.encode())]
    if origin is not None:
        raw.append((b"origin", origin.encode()))
    raw.extend(headers or [])
    return {
        "type": "websocket",
        "path": "/api/sessions/abc/live",
        "query_string": query,
        "headers": raw,
        "scheme": "ws",
        "server": ("127.0.0.1", 8765),
        "extensions": {"websocket.http.response": {}} if extensions is None else extensions,
    }


async def run_guard(scope: Scope) -> tuple[Recorder, list[Message]]:
    inner = Recorder()
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "websocket.connect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await AccessGuard(inner, policy())(scope, receive, send)
    return inner, sent


def denial(sent: list[Message]) -> tuple[int, str]:
    assert sent[0]["type"] == "websocket.http.response.start"
    return sent[0]["status"], json.loads(sent[1]["body"])["error"]["code"]


async def test_a_websocket_with_token_and_own_origin_reaches_the_app() -> None:
    inner, sent = await run_guard(ws_scope())
    assert inner.reached and sent == []


async def test_a_websocket_may_carry_the_token_as_a_bearer_header() -> None:
    scope = ws_scope(query=b"", headers=[(b"authorization", f"Bearer {TOKEN}".encode())])
    inner, _ = await run_guard(scope)
    assert inner.reached


async def test_a_websocket_without_an_origin_is_judged_by_its_token() -> None:
    inner, _ = await run_guard(ws_scope(origin=None))
    assert inner.reached


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        (ws_scope(query=b""), (401, "unauthorized")),
        (ws_scope(query=b"token=wrong"), (401, "unauthorized")),
        (ws_scope(query=b"other=1"), (401, "unauthorized")),
        (ws_scope(origin="http://evil.example"), (403, "origin_not_allowed")),
        (ws_scope(origin="http://localhost:8765"), (403, "origin_not_allowed")),
        (
            ws_scope(host="evil.example:8765", origin="http://evil.example:8765"),
            (421, "host_not_allowed"),
        ),
    ],
)
async def test_a_refused_websocket_gets_an_http_error_before_accept(
    scope: Scope, expected: tuple[int, str]
) -> None:
    inner, sent = await run_guard(scope)
    assert not inner.reached
    assert denial(sent) == expected


async def test_without_the_response_extension_a_refused_websocket_is_closed_with_1008() -> None:
    inner, sent = await run_guard(ws_scope(query=b"", extensions={}))
    assert not inner.reached
    assert sent[0]["type"] == "websocket.close" and sent[0]["code"] == 1008


async def test_other_scopes_pass_through_untouched() -> None:
    inner = Recorder()

    async def receive() -> Message:
        return {"type": "lifespan.startup"}

    async def send(message: Message) -> None:
        raise AssertionError("unreachable: the guard must not answer lifespan")

    await AccessGuard(inner, policy())({"type": "lifespan"}, receive, send)
    assert inner.reached


# -- failed authentication, throttled per address --------------------------------------


async def test_failed_authentication_is_throttled_per_address_without_reading_the_token(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def answer(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    throttle = AuthThrottle(limit=3, window=60.0)
    app = AccessGuard(answer, policy(), throttle)

    def client(address: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765")

    def bearer(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    with caplog.at_level(logging.INFO, logger="dsh.web.throttle"):
        async with client("10.0.0.1") as attacker, client("10.0.0.2") as other:
            guesses = [
                await attacker.get("/api/health", headers=bearer(f"guess-{n}")) for n in range(5)
            ]
            right_from_attacker = await attacker.get("/api/sessions", headers=bearer(TOKEN))
            right_from_other = await other.get("/api/sessions", headers=bearer(TOKEN))
            page = await attacker.get("/")
        throttle.close()

    assert [response.status_code for response in guesses] == [401, 401, 401, 429, 429]
    throttled = guesses[-1]
    assert throttled.json()["error"]["code"] == "too_many_failures"
    assert throttled.headers["retry-after"] == "60"
    assert "try again in 60 s" in throttled.json()["error"]["message"]
    assert right_from_attacker.status_code == 429  # not compared: a 429 tells nothing
    assert (right_from_other.status_code, page.status_code) == (204, 204)
    assert "guess-" not in caplog.text and TOKEN not in caplog.text
    assert len(caplog.messages) == 2  # the first failure at once, the rest in one summary
    assert "2 refused (401), 3 throttled (429)" in caplog.messages[1]
    assert "throttled now: 10.0.0.1" in caplog.messages[1]


async def test_a_throttled_address_cannot_open_a_websocket_either() -> None:
    throttle = AuthThrottle(limit=2, window=30.0)
    scope = ws_scope(query=b"token=wrong")
    scope["client"] = ("10.0.0.1", 40000)
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "websocket.connect"}

    async def send(message: Message) -> None:
        sent.append(message)

    inner = Recorder()
    for _ in range(3):
        await AccessGuard(inner, policy(), throttle)(scope, receive, send)
    right = ws_scope()
    right["client"] = ("10.0.0.1", 40001)
    await AccessGuard(inner, policy(), throttle)(right, receive, send)

    starts = [message for message in sent if message["type"] == "websocket.http.response.start"]
    assert [message["status"] for message in starts] == [401, 401, 429, 429]
    assert (b"retry-after", b"30") in starts[-1]["headers"]
    assert not inner.reached
