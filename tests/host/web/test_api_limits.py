"""Bounded HTTP bodies (issue 19): every JSON value an API body carries is within `dsh.limits`."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from dsh.base.limits import MAX_DEPTH, MAX_TEXT_BYTES
from dsh.web.app import create_app
from dsh.web.settings import WebSettings

from .conftest import AUTH

pytestmark = pytest.mark.anyio


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


async def live_session(client: httpx.AsyncClient) -> str:
    created = await client.post("/api/sessions")
    assert created.status_code == 201
    session_id: str = created.json()["session"]["id"]
    return session_id


async def test_action_args_nested_deeper_than_the_limit_are_a_422_naming_it(
    client: httpx.AsyncClient,
) -> None:
    session_id = await live_session(client)
    body = {"plugin": "test-marker", "action": "mark", "args": {"x": nested(MAX_DEPTH)}}
    answer = await client.post(f"/api/sessions/{session_id}/actions", json=body)
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error["code"] == "invalid_body"
    assert f"nested more than {MAX_DEPTH} levels deep" in error["message"]


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
async def test_action_args_with_a_non_finite_number_are_a_422(
    client: httpx.AsyncClient, number: str
) -> None:
    session_id = await live_session(client)
    content = '{"plugin": "test-marker", "action": "mark", "args": {"x": [' + number + "]}}"
    answer = await client.post(
        f"/api/sessions/{session_id}/actions",
        content=content,
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["code"] == "invalid_body"


async def test_a_body_nested_past_any_parser_is_refused_with_a_4xx(
    client: httpx.AsyncClient,
) -> None:
    session_id = await live_session(client)
    depth = 200_000  # 400 KB of brackets: inside the body limit, past every JSON parser
    content = '{"plugin": "p", "action": "a", "args": {"x": ' + "[" * depth + "]" * depth + "}}"
    answer = await client.post(
        f"/api/sessions/{session_id}/actions",
        content=content,
        headers={"content-type": "application/json"},
    )
    assert answer.status_code in (400, 422), answer.text
    assert "error" in answer.json()


async def test_a_message_longer_than_the_text_limit_is_a_422(
    host: Any, settings: WebSettings
) -> None:
    roomy = settings.model_copy(update={"max_body_bytes": 4 * MAX_TEXT_BYTES})
    transport = httpx.ASGITransport(app=create_app(host, roomy), raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8765", headers=AUTH
    ) as client:
        session_id = await live_session(client)
        answer = await client.post(
            f"/api/sessions/{session_id}/messages", json={"text": "x" * (MAX_TEXT_BYTES + 1)}
        )
        assert answer.status_code == 422
        assert f"limit of {MAX_TEXT_BYTES:,} bytes" in answer.json()["error"]["message"]
        fits = await client.post(
            f"/api/sessions/{session_id}/messages", json={"text": "é" * (MAX_TEXT_BYTES // 2)}
        )
        assert fits.status_code == 202
