from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from dsh.base.limits import MAX_TEXT_BYTES
from dsh.host.host import Host
from dsh.web import WebSettings, create_app
from dsh.web.limits import BodyLimit
from dsh.web.settings import MESSAGE_BODY_BYTES

from .conftest import AUTH

pytestmark = pytest.mark.anyio

LIMIT = 1024


@pytest.fixture
async def small(host: Host, settings: WebSettings) -> AsyncIterator[httpx.AsyncClient]:
    small = {"max_body_bytes": LIMIT, "max_message_body_bytes": LIMIT}
    app = create_app(host, settings.model_copy(update=small))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8765", headers=AUTH
    ) as http:
        yield http


async def session_id(client: httpx.AsyncClient) -> str:
    return str((await client.post("/api/sessions")).json()["session"]["id"])


def message(size: int) -> bytes:
    padding = size - len(b'{"text":""}')
    return b'{"text":"' + b"a" * padding + b'"}'


async def test_a_body_within_the_limit_reaches_the_route(small: httpx.AsyncClient) -> None:
    sid = await session_id(small)
    response = await small.post(
        f"/api/sessions/{sid}/messages",
        content=message(LIMIT),
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 202


async def test_a_declared_oversized_body_is_413(small: httpx.AsyncClient) -> None:
    sid = await session_id(small)
    response = await small.post(
        f"/api/sessions/{sid}/messages",
        content=message(LIMIT + 1),
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"


async def test_a_streamed_oversized_body_without_content_length_is_413(
    small: httpx.AsyncClient,
) -> None:
    sid = await session_id(small)
    sent: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"text":"'
        for _ in range(8):
            sent.append(256)
            yield b"a" * 256
        yield b'"}'

    request = small.build_request(
        "POST",
        f"/api/sessions/{sid}/messages",
        content=chunks(),
        headers={"content-type": "application/json"},
    )
    assert "content-length" not in request.headers
    response = await small.send(request)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"


async def test_the_default_limit_is_one_mebibyte(client: httpx.AsyncClient) -> None:
    sid = await session_id(client)
    body = b'{"title":"' + b"a" * (1024 * 1024) + b'"}'
    response = await client.patch(
        f"/api/sessions/{sid}", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["error"]["message"] == (
        "the request body is larger than the limit of 1,048,576 bytes"
    )


async def test_a_message_of_exactly_the_text_limit_is_accepted_however_it_is_escaped(
    client: httpx.AsyncClient,
) -> None:
    # Issue 35: the text limit is 1 MiB of UTF-8, but its JSON body is larger
    # (by 12 bytes at best), so a text of exactly the limit was refused 413.
    sid = await session_id(client)
    url = f"/api/sessions/{sid}/messages"
    plain = "x" * MAX_TEXT_BYTES
    controls = "\x01" * MAX_TEXT_BYTES  # six bytes of JSON each: the worst case
    for text in (plain, controls):
        answer = await client.post(url, json={"text": text, "timeZone": "Europe/Berlin"})
        assert answer.status_code == 202, answer.text[:200]
    answer = await client.post(url, json={"text": plain + "x"})
    assert answer.status_code == 422
    assert f"longer than the limit of {MAX_TEXT_BYTES:,} bytes" in answer.json()["error"]["message"]
    answer = await client.post(url, json={"text": "é" * (MAX_TEXT_BYTES // 2) + "x"})
    assert answer.status_code == 422


async def test_a_message_body_past_its_own_limit_is_413_naming_both_limits(
    client: httpx.AsyncClient,
) -> None:
    sid = await session_id(client)
    response = await client.post(
        f"/api/sessions/{sid}/messages",
        content=message(MESSAGE_BODY_BYTES + 1),
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json()["error"] == {
        "code": "body_too_large",
        "message": f"the request body is larger than the limit of {MESSAGE_BODY_BYTES:,} "
        f"bytes for a message (its text may be {MAX_TEXT_BYTES:,} bytes of UTF-8)",
    }


async def test_a_client_that_leaves_before_its_body_gets_no_answer() -> None:
    reached: list[Any] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        reached.append(scope)

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        raise AssertionError("unreachable: nobody to answer")

    scope = {"type": "http", "method": "POST", "path": "/", "headers": []}
    await BodyLimit(app, 10)(scope, receive, send)
    assert reached == []


async def test_the_replayed_body_is_followed_by_the_real_receive() -> None:
    messages: list[Message] = [
        {"type": "http.request", "body": b"ab", "more_body": True},
        {"type": "http.request", "body": b"c", "more_body": False},
        {"type": "http.disconnect"},
    ]
    seen: list[Message] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(await receive())
        seen.append(await receive())

    async def receive() -> Message:
        return messages.pop(0)

    async def send(message: Message) -> None:
        return None

    scope = {"type": "http", "method": "POST", "path": "/", "headers": []}
    await BodyLimit(app, 10)(scope, receive, send)
    assert seen == [
        {"type": "http.request", "body": b"abc", "more_body": False},
        {"type": "http.disconnect"},
    ]
