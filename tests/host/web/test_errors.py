from __future__ import annotations

import json

import pytest
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from dsh.base.errors import DshError
from dsh.persistence.errors import SessionNotFound
from dsh.web.errors import (
    ApiError,
    CatchAll,
    _http_error,
    _known_error,
    api_error_for,
    deny_websocket,
    describe_validation,
    error_body,
)

pytestmark = pytest.mark.anyio


def test_the_error_body_has_exactly_code_and_message() -> None:
    assert error_body("x", "y") == {"error": {"code": "x", "message": "y"}}


def test_an_api_error_keeps_its_status_code_and_message() -> None:
    error = ApiError(418, "teapot", "short and stout")
    assert (error.status, error.code, error.message) == (418, "teapot", "short and stout")
    assert api_error_for(error) is error
    assert api_error_for(KeyError("x")) is None


def test_validation_messages_name_the_field_and_where_it_is() -> None:
    response = describe_validation(
        [
            {"loc": ("path", "session_id"), "msg": "bad", "type": "value_error"},
            {"loc": ("query",), "msg": "odd", "type": "value_error"},
        ]
    )
    assert response.status_code == 422
    body = json.loads(response.body)
    assert body["error"]["code"] == "invalid_query"
    assert body["error"]["message"] == "path parameter 'session_id': bad; the query: odd"


def test_an_empty_validation_error_still_says_something() -> None:
    body = json.loads(describe_validation([]).body)
    assert body["error"] == {"code": "invalid_query", "message": "the request is invalid"}


async def test_other_http_errors_keep_their_status_and_detail() -> None:
    request = Request({"type": "http", "method": "GET", "path": "/x", "headers": []})
    response = await _http_error(request, HTTPException(400, "There was an error"))
    assert response.status_code == 400
    assert json.loads(response.body) == {
        "error": {"code": "http_error", "message": "There was an error"}
    }


async def noop_receive() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


async def test_catch_all_re_raises_when_the_response_had_started() -> None:
    async def half(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        raise RuntimeError("mid-stream")

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    with pytest.raises(RuntimeError, match="mid-stream"):
        await CatchAll(half)({"type": "http", "method": "GET", "path": "/"}, noop_receive, send)
    assert [message["type"] for message in sent] == ["http.response.start"]


async def test_catch_all_leaves_websockets_to_the_server() -> None:
    async def broken(scope: Scope, receive: Receive, send: Send) -> None:
        raise RuntimeError("ws")

    async def send(message: Message) -> None:
        raise AssertionError("unreachable")

    with pytest.raises(RuntimeError, match="ws"):
        await CatchAll(broken)({"type": "websocket", "path": "/"}, noop_receive, send)


async def test_deny_websocket_truncates_the_close_reason_without_the_extension() -> None:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    await deny_websocket(send, {"type": "websocket"}, 404, "x", "m" * 500)
    assert sent == [{"type": "websocket.close", "code": 1008, "reason": "m" * 120}]


def test_a_plugin_s_coded_refusal_keeps_its_status_code_and_message() -> None:
    from dsh.agents.errors import BarrierFailed
    from dsh.plugins.errors import ActionError

    conflict = api_error_for(ActionError.conflict("already gone", code="gone"))
    uncertain = api_error_for(BarrierFailed("persistence_uncertain", "EIO"))

    assert conflict is not None and (conflict.status, conflict.code) == (409, "gone")
    assert conflict.message == "already gone"
    assert uncertain is not None and (uncertain.status, uncertain.code) == (
        503,
        "persistence_uncertain",
    )


async def test_a_known_error_answers_as_its_class_declares_and_an_undeclared_one_as_a_bug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    request = Request({"type": "http", "method": "GET", "path": "/x", "headers": []})
    found = await _known_error(request, SessionNotFound("no session 'x'"))
    assert found.status_code == 404
    assert json.loads(found.body) == {
        "error": {"code": "session_not_found", "message": "no session 'x'"}
    }
    bug = await _known_error(request, DshError("the secret internals"))
    assert bug.status_code == 500
    assert json.loads(bug.body)["error"]["code"] == "internal_error"
    assert b"secret" not in bug.body
    assert "unhandled error in GET /x" in caplog.text and "secret internals" in caplog.text
