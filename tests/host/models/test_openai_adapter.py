"""`OpenAIAdapter` against a real HTTP server on loopback (tests/host/models/fake_openai.py)."""

from __future__ import annotations

import json
import logging
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import anyio
import pytest

from dsh.agents.agent import Agent
from dsh.models.base import Message, ModelReply, ModelRequest, ToolCall, describe_model
from dsh.models.errors import ModelError
from dsh.models.openai import OpenAIAdapter, OpenAIConfig, RetryPolicy
from dsh.session.live import LiveSessions
from dsh.session.log import Session
from tests.support.deadlines import WAIT

from .fake_openai import (
    FakeOpenAIServer,
    chunk,
    closed_port,
    completion,
    drop,
    error_reply,
    json_reply,
    raw_reply,
    running_server,
    sse_reply,
    stall,
)
from .watched_clock import WatchedClock, run_advancing

pytestmark = pytest.mark.anyio

HELLO = ModelRequest(messages=[Message(role="user", text="hello")], tools=[])


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAIServer]:
    async with running_server() as server:
        yield server


@pytest.fixture
def clock() -> WatchedClock:
    return WatchedClock()


def make_adapter(base_url: str, clock: WatchedClock, **fields: Any) -> OpenAIAdapter:
    config = OpenAIConfig(base_url=base_url, model="test-model", **fields)
    return OpenAIAdapter(config, clock=clock, rng=random.Random(7))


@pytest.fixture
async def adapter(server: FakeOpenAIServer, clock: WatchedClock) -> AsyncIterator[OpenAIAdapter]:
    async with make_adapter(server.base_url, clock, api_key="sk-test-secret") as adapter:
        yield adapter


class Deltas(list[str]):
    def __call__(self, text: str) -> None:
        self.append(text)


# -- replies -----------------------------------------------------------------


async def test_a_plain_reply_returns_the_assistant_text(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(json_reply(completion("Hi there.")))

    reply = await adapter.complete(HELLO)

    assert reply == ModelReply(text="Hi there.")
    assert server.requests[0].json()["stream"] is False


async def test_the_request_carries_model_messages_tools_and_the_bearer_key(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    tool = {
        "type": "function",
        "function": {"name": "echo", "description": "Echo.", "parameters": {"type": "object"}},
    }
    server.push(json_reply(completion("ok")))
    request = ModelRequest(
        messages=[
            Message(role="user", text="say it"),
            Message(
                role="assistant",
                text="",
                tool_calls=(ToolCall(id="c1", name="echo", arguments={"text": "é"}),),
            ),
            Message(role="tool", tool_call_id="c1", name="echo", content={"said": "é"}),
            Message(role="user", text="again"),
        ],
        tools=[tool],
    )

    await adapter.complete(request)

    received = server.requests[0]
    assert (received.method, received.path) == ("POST", "/v1/chat/completions")
    assert received.headers["authorization"] == "Bearer sk-test-secret"
    assert received.headers["content-type"] == "application/json"
    body = received.json()
    assert body["model"] == "test-model"
    assert body["tools"] == [tool]
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][1:] == [
        {"role": "user", "content": "say it"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "echo", "arguments": '{"text": "é"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"said": "é"}'},
        {"role": "user", "content": "again"},
    ]


async def test_a_request_without_tools_omits_the_tools_field_and_a_local_server_gets_no_key(
    server: FakeOpenAIServer, clock: WatchedClock
) -> None:
    server.push(json_reply(completion("ok")))
    async with make_adapter(server.base_url, clock) as adapter:
        await adapter.complete(HELLO)

    assert "tools" not in server.requests[0].json()
    assert "authorization" not in server.requests[0].headers


async def test_history_with_an_unanswered_tool_call_is_repaired_before_sending(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(json_reply(completion("ok")))
    calls = (
        ToolCall(id="a", name="echo", arguments="{}"),
        ToolCall(id="b", name="echo", arguments="{}"),
    )
    request = ModelRequest(
        messages=[
            Message(role="user", text="two things"),
            Message(role="assistant", tool_calls=calls),
            Message(role="tool", tool_call_id="a", name="echo", content=1),
            Message(role="user", text="are you there?"),
        ],
        tools=[],
    )

    await adapter.complete(request)

    messages = server.requests[0].json()["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert messages[3] == {"role": "tool", "tool_call_id": "a", "content": "1"}
    assert messages[4]["tool_call_id"] == "b"
    assert json.loads(messages[4]["content"])["error"]["code"] == "not_completed"


async def test_a_streamed_reply_passes_fragments_on_in_order_and_returns_the_whole_text(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(
        sse_reply(
            {"choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]},
            chunk("Hel"),
            chunk("lo, "),
            chunk("wörld"),
            chunk(finish_reason="stop"),
            {"choices": [], "usage": {"total_tokens": 3}},
        )
    )
    deltas = Deltas()

    reply = await adapter.complete(HELLO, on_delta=deltas)

    assert deltas == ["Hel", "lo, ", "wörld"]
    assert reply == ModelReply(text="Hello, wörld")
    assert server.requests[0].json()["stream"] is True


async def test_sse_lines_split_across_network_pieces_and_keepalive_comments_are_read(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    first = json.dumps(chunk("one ")).encode()
    second = json.dumps(chunk("two", finish_reason="stop")).encode()
    server.push(
        raw_reply(
            200,
            [
                b": keep-alive\n\n",
                b"data: " + first[:10],
                first[10:] + b"\n",
                b"\ndata:" + second + b"\r\n\r\n",
                b"data: [DONE]\n\n",
            ],
            [("content-type", "text/event-stream; charset=utf-8")],
        )
    )
    deltas = Deltas()

    reply = await adapter.complete(HELLO, on_delta=deltas)

    assert deltas == ["one ", "two"]
    assert reply.text == "one two"


async def test_a_server_that_ignores_stream_true_still_answers_through_on_delta(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(json_reply(completion("whole")))
    deltas = Deltas()

    reply = await adapter.complete(HELLO, on_delta=deltas)

    assert (reply.text, deltas) == ("whole", ["whole"])


async def test_a_stream_without_done_but_with_a_finish_reason_is_complete(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(sse_reply(chunk("fine"), chunk(finish_reason="stop"), done=False))

    reply = await adapter.complete(HELLO, on_delta=Deltas())

    assert reply.text == "fine"


# -- tool calls ----------------------------------------------------------------


async def test_tool_calls_in_a_whole_reply_keep_their_order_and_raw_arguments(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(
        json_reply(
            completion(
                None,
                [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "first", "arguments": '{"a": 1}'},
                    },
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "second", "arguments": "{"},
                    },
                ],
            )
        )
    )

    reply = await adapter.complete(HELLO)

    assert reply == ModelReply(
        text="",
        tool_calls=(
            ToolCall(id="c1", name="first", arguments='{"a": 1}'),
            ToolCall(id="c2", name="second", arguments="{"),
        ),
    )


async def test_fragmented_parallel_streamed_tool_calls_are_assembled_by_index(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    def fragment(index: int, arguments: str, **first: str) -> dict[str, Any]:
        call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
        if first:
            call["id"] = first["id"]
            call["type"] = "function"
            call["function"]["name"] = first["name"]
        return call

    server.push(
        sse_reply(
            chunk("Let me check. "),
            chunk(tool_calls=[fragment(0, "", id="call_a", name="schedule_create")]),
            chunk(tool_calls=[fragment(0, '{"prompt": "str')]),
            chunk(tool_calls=[fragment(1, '{"after_', id="call_b", name="schedule_list")]),
            chunk(tool_calls=[fragment(0, 'etch", "after_seconds": 10}')]),
            chunk(tool_calls=[fragment(1, 'seconds": ')]),
            chunk(tool_calls=[fragment(1, "5")], finish_reason="tool_calls"),
        )
    )
    deltas = Deltas()

    reply = await adapter.complete(HELLO, on_delta=deltas)

    assert deltas == ["Let me check. "]
    assert reply.text == "Let me check. "
    assert reply.tool_calls == (
        ToolCall(
            id="call_a",
            name="schedule_create",
            arguments='{"prompt": "stretch", "after_seconds": 10}',
        ),
        ToolCall(id="call_b", name="schedule_list", arguments='{"after_seconds": 5'),
    )


async def test_a_tool_call_with_invalid_json_arguments_is_returned_raw(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(
        sse_reply(
            chunk(
                tool_calls=[
                    {
                        "index": 0,
                        "id": "c",
                        "type": "function",
                        "function": {"name": "echo", "arguments": "{'single': quotes"},
                    }
                ],
                finish_reason="tool_calls",
            )
        )
    )

    reply = await adapter.complete(HELLO, on_delta=Deltas())

    assert reply.tool_calls == (ToolCall(id="c", name="echo", arguments="{'single': quotes"),)


# -- malformed answers -----------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (raw_reply(200, [b"<html>oops</html>"]), "the reply is not JSON: '<html>oops</html>'"),
        (json_reply({"object": "nothing"}), "the reply is malformed: choices: Field required"),
        (json_reply({"choices": []}), "the reply has no choices"),
        (
            sse_reply("{not json"),
            "a streamed chunk is not JSON: '{not json'",
        ),
        (
            sse_reply({"choices": [{"index": 0, "delta": {"content": 5}}]}),
            "a streamed chunk is malformed: choices.0.delta.content: "
            "Input should be a valid string",
        ),
        (
            sse_reply(chunk("half"), done=False),
            "the stream ended before the reply was complete (no finish_reason, no [DONE])",
        ),
        (
            sse_reply(chunk(tool_calls=[{"index": 0, "function": {"arguments": "{}"}}])),
            "tool call 0 in the reply has no function name",
        ),
    ],
)
async def test_a_malformed_answer_is_a_bad_response_naming_the_problem(
    server: FakeOpenAIServer, adapter: OpenAIAdapter, reply: Any, expected: str
) -> None:
    server.push(reply)

    with pytest.raises(ModelError) as caught:
        await adapter.complete(HELLO, on_delta=Deltas())

    assert (caught.value.code, caught.value.message) == ("bad_response", expected)
    assert len(server.requests) == 1


async def test_an_error_reported_inside_the_stream_ends_the_call_without_retrying(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(sse_reply(chunk("par"), {"error": {"message": "the GPU caught fire"}}))

    with pytest.raises(ModelError) as caught:
        await adapter.complete(HELLO, on_delta=Deltas())

    assert caught.value.code == "model_unavailable"
    assert "the GPU caught fire" in caught.value.message
    assert len(server.requests) == 1


async def test_a_llama_cpp_style_error_line_ends_the_call(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(
        raw_reply(
            200,
            [b'error: {"code": 500, "message": "context too long"}\n\n'],
            [("content-type", "text/event-stream")],
        )
    )

    with pytest.raises(ModelError) as caught:
        await adapter.complete(HELLO, on_delta=Deltas())

    assert caught.value.code == "model_unavailable"
    assert "context too long" in caught.value.message


# -- errors and retries -----------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
async def test_an_auth_failure_is_not_retried_and_never_shows_the_key(
    server: FakeOpenAIServer, adapter: OpenAIAdapter, clock: WatchedClock, status: int
) -> None:
    server.push(error_reply(status, "Incorrect API key provided: sk-test-secret"))

    with pytest.raises(ModelError) as caught:
        await adapter.complete(HELLO)

    error = caught.value
    assert error.code == "model_auth_failed"
    assert f"HTTP {status}" in error.message
    assert "DSH_API_KEY" in error.message
    assert "sk-test-secret" not in str(error)
    assert "Incorrect API key provided: ***" in error.message
    assert len(server.requests) == 1
    assert clock.sleeps == []


@pytest.mark.parametrize("status", [400, 404, 422, 402])
async def test_a_rejected_request_is_not_retried_and_carries_the_servers_message(
    server: FakeOpenAIServer, adapter: OpenAIAdapter, status: int
) -> None:
    server.push(error_reply(status, "model 'test-model' does not exist"))

    with pytest.raises(ModelError) as caught:
        await adapter.complete(HELLO)

    assert caught.value.code == "model_request_rejected"
    assert f"HTTP {status}: model 'test-model' does not exist" in caught.value.message
    assert ("DSH_MODEL_BASE_URL" in caught.value.message) == (status == 404)
    assert len(server.requests) == 1


async def test_rate_limiting_is_retried_with_jittered_backoff_then_succeeds(
    server: FakeOpenAIServer, adapter: OpenAIAdapter, clock: WatchedClock
) -> None:
    server.push(
        error_reply(429, "slow down"),
        error_reply(429, "slow down"),
        json_reply(completion("finally")),
    )

    reply = await run_advancing(clock, lambda: adapter.complete(HELLO))

    assert reply.text == "finally"
    assert len(server.requests) == 3
    jitter = random.Random(7)
    assert clock.sleeps == [jitter.random() * 0.5, jitter.random() * 1.0]


async def test_retry_after_in_seconds_is_waited_exactly_on_the_clock(
    server: FakeOpenAIServer, adapter: OpenAIAdapter, clock: WatchedClock
) -> None:
    server.push(
        error_reply(429, "slow down", [("retry-after", "7")]),
        json_reply(completion("done")),
    )
    outcome: list[ModelReply] = []

    async with anyio.create_task_group() as group:

        async def call() -> None:
            outcome.append(await adapter.complete(HELLO))

        group.start_soon(call)
        await clock.sleeps_started(1)
        assert clock.sleeps == [7.0]
        clock.advance(6.9)
        assert clock.sleeping == 1
        assert len(server.requests) == 1
        clock.advance(0.1)

    assert outcome == [ModelReply(text="done")]
    assert len(server.requests) == 2


async def test_retry_after_as_an_http_date_is_measured_against_the_wall_clock(
    server: FakeOpenAIServer, adapter: OpenAIAdapter, clock: WatchedClock
) -> None:
    now = datetime.fromtimestamp(clock.wall_ms() / 1000, UTC)
    server.push(
        error_reply(
            503, "busy", [("retry-after", format_datetime(now + timedelta(seconds=30), True))]
        ),
        json_reply(completion("back")),
    )

    reply = await run_advancing(clock, lambda: adapter.complete(HELLO))

    assert reply.text == "back"
    assert clock.sleeps == [30.0]


async def test_a_retry_after_beyond_the_cap_gives_up_at_once_saying_how_long(
    server: FakeOpenAIServer, adapter: OpenAIAdapter, clock: WatchedClock
) -> None:
    server.push(error_reply(429, "quota exhausted", [("retry-after", "3600")]))

    with pytest.raises(ModelError) as caught:
        await adapter.complete(HELLO)

    assert caught.value.code == "model_rate_limited"
    assert "quota exhausted" in caught.value.message
    assert "asks to wait 3600 s" in caught.value.message
    assert clock.sleeps == []


async def test_rate_limiting_that_never_ends_is_reported_after_the_last_retry(
    server: FakeOpenAIServer, adapter: OpenAIAdapter, clock: WatchedClock
) -> None:
    server.push(*[error_reply(429, "slow down", [("retry-after-ms", "1500")])] * 4)

    with pytest.raises(ModelError) as caught:
        await run_advancing(clock, lambda: adapter.complete(HELLO))

    assert caught.value.code == "model_rate_limited"
    assert caught.value.message.endswith(
        "HTTP 429 Too Many Requests: slow down (gave up after 4 attempts)"
    )
    assert clock.sleeps == [1.5, 1.5, 1.5]


@pytest.mark.parametrize("status", [500, 503])
async def test_server_errors_are_retried_then_given_up_with_the_last_status(
    server: FakeOpenAIServer, clock: WatchedClock, status: int
) -> None:
    server.push(*[error_reply(status, f"failure {n}") for n in range(3)])
    async with make_adapter(server.base_url, clock, max_retries=2) as adapter:
        with pytest.raises(ModelError) as caught:
            await run_advancing(clock, lambda: adapter.complete(HELLO))

    assert caught.value.code == "model_unavailable"
    assert f"answered HTTP {status}" in caught.value.message
    assert caught.value.message.endswith("failure 2 (gave up after 3 attempts)")
    assert len(server.requests) == 3
    assert len(clock.sleeps) == 2


async def test_a_server_error_then_a_good_reply_succeeds(
    server: FakeOpenAIServer, adapter: OpenAIAdapter, clock: WatchedClock
) -> None:
    server.push(raw_reply(502, [b"Bad Gateway"]), sse_reply(chunk("ok", finish_reason="stop")))
    deltas = Deltas()

    reply = await run_advancing(clock, lambda: adapter.complete(HELLO, on_delta=deltas))

    assert (reply.text, deltas) == ("ok", ["ok"])
    assert len(server.requests) == 2


async def test_a_refused_connection_is_retried_and_then_reported(
    clock: WatchedClock, caplog: pytest.LogCaptureFixture
) -> None:
    port = await closed_port()
    caplog.set_level(logging.WARNING, logger="dsh.models.openai")
    async with make_adapter(f"http://127.0.0.1:{port}/v1", clock, api_key="sk-hidden") as adapter:
        with pytest.raises(ModelError) as caught:
            await run_advancing(clock, lambda: adapter.complete(HELLO))

    assert caught.value.code == "model_unavailable"
    assert caught.value.message.startswith(
        f"could not reach the model server at http://127.0.0.1:{port}/v1: ConnectError"
    )
    assert caught.value.message.endswith("(gave up after 4 attempts)")
    assert len(clock.sleeps) == 3
    assert "; retry 1 of 3 in " in caplog.records[0].getMessage()
    assert len(caplog.records) == 3
    assert "sk-hidden" not in caplog.text


async def test_no_retries_when_max_retries_is_zero(
    server: FakeOpenAIServer, clock: WatchedClock
) -> None:
    server.push(error_reply(503, "busy"))
    async with make_adapter(server.base_url, clock, max_retries=0) as adapter:
        with pytest.raises(ModelError) as caught:
            await adapter.complete(HELLO)

    assert caught.value.message.endswith("busy (gave up after 1 attempt)")


async def test_a_read_timeout_counts_as_unavailable_and_is_retried(
    server: FakeOpenAIServer, clock: WatchedClock
) -> None:
    server.push(stall(stream=False), json_reply(completion("awake")))
    async with make_adapter(server.base_url, clock, read_timeout=0.05) as adapter:
        reply = await run_advancing(clock, lambda: adapter.complete(HELLO))

    assert reply.text == "awake"
    assert len(server.requests) == 2


async def test_a_stream_that_breaks_after_text_was_passed_on_is_not_retried(
    server: FakeOpenAIServer, clock: WatchedClock
) -> None:
    server.push(drop(b"data: " + json.dumps(chunk("partial")).encode() + b"\n\n"))
    deltas = Deltas()
    async with make_adapter(server.base_url, clock) as adapter:
        with pytest.raises(ModelError) as caught:
            await adapter.complete(HELLO, on_delta=deltas)

    assert deltas == ["partial"]
    assert caught.value.code == "model_unavailable"
    assert "broke while streaming: RemoteProtocolError" in caught.value.message
    assert len(server.requests) == 1
    assert clock.sleeps == []


# -- lifecycle -------------------------------------------------------------------


async def test_a_closed_adapter_fails_with_model_unavailable(
    server: FakeOpenAIServer, clock: WatchedClock
) -> None:
    adapter = make_adapter(server.base_url, clock)
    await adapter.aclose()

    with pytest.raises(ModelError) as caught:
        await adapter.complete(HELLO)

    assert caught.value.code == "model_unavailable"
    assert "is closed" in caught.value.message
    assert server.requests == []


async def test_connections_are_reused_across_calls(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(json_reply(completion("one")), json_reply(completion("two")))

    first = await adapter.complete(HELLO)
    second = await adapter.complete(HELLO)

    assert (first.text, second.text) == ("one", "two")
    assert server.connections == 1


async def test_the_repr_names_model_and_server_but_not_the_key(adapter: OpenAIAdapter) -> None:
    text = repr(adapter) + repr(adapter.config)

    assert "test-model" in text
    assert "sk-test-secret" not in text


async def test_the_description_names_model_and_server_without_any_secret(
    clock: WatchedClock,
) -> None:
    url = "https://user:hunter2@models.example/v1?api-key=sk-in-query#part"
    async with make_adapter(url, clock, api_key="sk-test-secret") as adapter:
        assert describe_model(adapter) == "openai test-model at https://models.example/v1"


async def test_from_env_builds_a_configured_adapter(clock: WatchedClock) -> None:
    env = {"DSH_MODEL_BASE_URL": "http://localhost:11434/v1", "DSH_MODEL": "llama3.2"}
    async with OpenAIAdapter.from_env(env=env, clock=clock) as adapter:
        assert adapter.config.endpoint == "http://localhost:11434/v1/chat/completions"
        assert adapter.config.model == "llama3.2"
        assert adapter.clock is clock
        assert adapter.policy == RetryPolicy()


# -- cancellation -----------------------------------------------------------------


async def test_closing_an_agent_cancels_its_stalled_model_request_promptly(
    server: FakeOpenAIServer, adapter: OpenAIAdapter, clock: WatchedClock
) -> None:
    server.push(stall(b"data: " + json.dumps(chunk("thinking")).encode() + b"\n\n"))
    live = LiveSessions(clock=clock)
    session = Session.new("s1", cwd="/", created_at=clock.wall_ms())
    live.open(session)
    deltas = Deltas()

    async with anyio.create_task_group() as group:
        agent = Agent(session=session, live=live, model=adapter, group=group)
        agent.add_delta_listener(deltas)
        agent.submit("hello")
        with anyio.fail_after(WAIT):
            await server.stalled.wait()
            await server.wait_for_requests(1)
        # The server never answers: returning at all proves the request was cancelled.
        with anyio.fail_after(WAIT):
            await agent.aclose()
        with anyio.fail_after(WAIT):
            await server.disconnected.wait()

    assert deltas == ["thinking"]
    assert [event.type for event in session.events] == ["message/user", "turn/end"]
    assert session.events[-1].data == {
        "status": "error",
        "error": {"code": "cancelled", "message": "the agent closed during this turn"},
    }


async def test_cancelling_a_waiting_retry_stops_without_another_request(
    server: FakeOpenAIServer, adapter: OpenAIAdapter, clock: WatchedClock
) -> None:
    server.push(error_reply(503, "busy"))

    async with anyio.create_task_group() as group:
        group.start_soon(adapter.complete, HELLO)
        await clock.sleeps_started(1)
        group.cancel_scope.cancel()

    assert clock.sleeping == 0
    assert len(server.requests) == 1


async def test_a_stream_that_breaks_before_any_text_was_passed_on_is_retried(
    server: FakeOpenAIServer, clock: WatchedClock
) -> None:
    fragment = {"index": 0, "id": "c", "function": {"name": "echo", "arguments": "{"}}
    server.push(
        drop(b"data: " + json.dumps(chunk(tool_calls=[fragment])).encode() + b"\n\n"),
        sse_reply(chunk("changed my mind", finish_reason="stop")),
    )
    deltas = Deltas()
    async with make_adapter(server.base_url, clock) as adapter:
        reply = await run_advancing(clock, lambda: adapter.complete(HELLO, on_delta=deltas))

    assert reply == ModelReply(text="changed my mind")
    assert deltas == ["changed my mind"]
    assert len(server.requests) == 2


async def test_a_streamed_answer_to_a_request_without_on_delta_is_still_read(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(
        sse_reply(
            chunk("quiet"),
            {"choices": [{"index": 0, "finish_reason": "stop"}]},
        )
    )

    reply = await adapter.complete(HELLO)

    assert reply.text == "quiet"


async def test_a_body_that_cannot_be_decoded_is_a_bad_response(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(
        raw_reply(
            200,
            [b"this is not gzip"],
            [("content-type", "application/json"), ("content-encoding", "gzip")],
        )
    )

    with pytest.raises(ModelError) as caught:
        await adapter.complete(HELLO)

    assert caught.value.code == "bad_response"
    assert caught.value.message.startswith("the reply could not be decoded: ")


async def test_a_server_message_that_echoes_the_key_is_redacted(
    server: FakeOpenAIServer, adapter: OpenAIAdapter
) -> None:
    server.push(sse_reply({"error": {"message": "bad key sk-test-secret for this model"}}))

    with pytest.raises(ModelError) as caught:
        await adapter.complete(HELLO, on_delta=Deltas())

    assert caught.value.message.endswith("bad key *** for this model")
    assert "sk-test-secret" not in str(caught.value)
