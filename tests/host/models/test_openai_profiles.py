"""Each provider profile against a loopback server that speaks exactly that provider.

`fake_providers` holds the servers; the DeepSeek one refuses a request whose
tool-call turns lack the reasoning it streamed, as DeepSeek's thinking mode
does, so these tests fail if the pass-back regresses.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from pydantic import JsonValue

from dsh.agents.agent import Agent
from dsh.agents.tools import Tool, ToolArguments, ToolContext
from dsh.models.base import Message, ModelReply, ModelRequest, StreamSink, ToolCall
from dsh.models.errors import ModelError
from dsh.models.openai import OpenAIAdapter, OpenAIConfig
from dsh.session.live import LiveSessions
from dsh.session.log import Session
from tests.support.deadlines import WAIT

from .fake_openai import FakeOpenAIServer, drop, json_reply, running_server, sse_reply
from .fake_providers import (
    DEEPSEEK,
    GENERIC,
    OLLAMA,
    OPENAI,
    PASS_BACK_REFUSAL,
    Call,
    provider,
    rate_limited,
)
from .watched_clock import WatchedClock, run_advancing

pytestmark = pytest.mark.anyio

HELLO = ModelRequest(messages=[Message(role="user", text="remind me")], tools=[])
REMIND = Call("call_r1", "remind", {"prompt": "stretch", "after_seconds": 10}, pieces=4)
THOUGHT = "The person wants a reminder in ten seconds; I will call remind."


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAIServer]:
    async with running_server() as server:
        yield server


def adapter_for(server: FakeOpenAIServer, profile: str, **fields: Any) -> OpenAIAdapter:
    config = OpenAIConfig(
        base_url=server.base_url, model=f"{profile}-model", profile=profile, **fields
    )
    return OpenAIAdapter(config, clock=WatchedClock(), rng=random.Random(1))


class Channels:
    """Records the two delta channels separately."""

    def __init__(self) -> None:
        self.answer: list[str] = []
        self.reasoning: list[str] = []
        self.sink = StreamSink(self.answer.append, self.reasoning.append)


# -- every family's stream ------------------------------------------------------------


@pytest.mark.parametrize(
    ("family", "reasoning_read"),
    [(DEEPSEEK, True), (OLLAMA, True), (GENERIC, True), (OPENAI, False)],
)
async def test_a_streamed_turn_keeps_reasoning_content_and_fragmented_calls_apart(
    server: FakeOpenAIServer, family: str, reasoning_read: bool
) -> None:
    fake = provider(family)
    server.push(fake.answer(reasoning=THOUGHT, content="Setting it.", calls=[REMIND]))
    channels = Channels()

    async with adapter_for(server, family) as adapter:
        reply = await adapter.complete(HELLO, on_delta=channels.sink)

    assert reply.text == "Setting it." == "".join(channels.answer)
    assert reply.tool_calls == (
        ToolCall("call_r1", "remind", json.dumps({"prompt": "stretch", "after_seconds": 10})),
    )
    assert reply.reasoning == (THOUGHT if reasoning_read else None)
    assert "".join(channels.reasoning) == (THOUGHT if reasoning_read else "")
    assert len(channels.reasoning) == (3 if reasoning_read else 0)
    assert THOUGHT not in "".join(channels.answer)


@pytest.mark.parametrize("family", [DEEPSEEK, OLLAMA, GENERIC])
async def test_a_whole_reply_carries_its_reasoning_in_the_familys_field(
    server: FakeOpenAIServer, family: str
) -> None:
    fake = provider(family)
    server.push(fake.answer(reasoning=THOUGHT, content="Done."))

    async with adapter_for(server, family) as adapter:
        reply = await adapter.complete(HELLO)

    assert reply == ModelReply(text="Done.", reasoning=THOUGHT)
    assert server.requests[0].json()["stream"] is False


async def test_a_whole_reply_reports_reasoning_before_the_answer_to_a_streaming_caller(
    server: FakeOpenAIServer,
) -> None:
    whole = provider(DEEPSEEK)._completion(THOUGHT, "Done.", [])
    events: list[tuple[str, str]] = []

    server.push(json_reply(whole))
    sink = StreamSink(
        lambda text: events.append(("answer", text)),
        lambda text: events.append(("reasoning", text)),
    )
    async with adapter_for(server, DEEPSEEK) as adapter:
        reply = await adapter.complete(HELLO, on_delta=sink)

    assert events == [("reasoning", THOUGHT), ("answer", "Done.")]
    assert reply.reasoning == THOUGHT


@pytest.mark.parametrize("family", [DEEPSEEK, OPENAI, OLLAMA, GENERIC])
async def test_every_family_is_retried_after_a_429_with_retry_after(
    server: FakeOpenAIServer, family: str
) -> None:
    fake = provider(family)
    server.push(rate_limited(2), fake.answer(reasoning="ok then", content="Back."))
    async with adapter_for(server, family) as adapter:
        assert isinstance(adapter.clock, WatchedClock)
        reply = await run_advancing(
            adapter.clock, lambda: adapter.complete(HELLO, on_delta=Channels().sink)
        )

    assert reply.text == "Back."
    assert adapter.clock.sleeps == [2.0]
    assert len(server.requests) == 2


async def test_a_plain_callable_sink_never_hears_the_reasoning(server: FakeOpenAIServer) -> None:
    server.push(provider(DEEPSEEK).answer(reasoning=THOUGHT, content="Hi."))
    heard: list[str] = []

    async with adapter_for(server, DEEPSEEK) as adapter:
        reply = await adapter.complete(HELLO, on_delta=heard.append)

    assert ("".join(heard), reply.reasoning) == ("Hi.", THOUGHT)


async def test_a_stream_that_breaks_after_reasoning_was_passed_on_is_not_retried(
    server: FakeOpenAIServer,
) -> None:
    piece = provider(DEEPSEEK)._delta_chunk({"reasoning_content": "half a thou"})
    server.push(drop(piece), provider(DEEPSEEK).answer(content="never asked"))
    channels = Channels()

    async with adapter_for(server, DEEPSEEK) as adapter:
        with pytest.raises(ModelError) as caught:
            await adapter.complete(HELLO, on_delta=channels.sink)

    assert caught.value.code == "model_unavailable"
    assert channels.reasoning == ["half a thou"]
    assert len(server.requests) == 1


async def test_reasoning_that_is_not_a_string_is_a_bad_response_naming_the_field(
    server: FakeOpenAIServer,
) -> None:
    server.push(sse_reply({"choices": [{"index": 0, "delta": {"reasoning_content": 7}}]}))

    async with adapter_for(server, DEEPSEEK) as adapter:
        with pytest.raises(ModelError) as caught:
            await adapter.complete(HELLO, on_delta=Channels().sink)

    assert (caught.value.code, caught.value.message) == (
        "bad_response",
        "the reply's reasoning_content is int, not a string",
    )


async def test_fields_a_profile_does_not_read_are_ignored_whatever_their_shape(
    server: FakeOpenAIServer,
) -> None:
    delta = {"content": "fine", "reasoning": {"summary": "not ours"}, "thinking": 3}
    server.push(sse_reply({"choices": [{"index": 0, "delta": delta, "finish_reason": "stop"}]}))

    async with adapter_for(server, DEEPSEEK) as adapter:
        reply = await adapter.complete(HELLO, on_delta=Channels().sink)

    assert reply == ModelReply(text="fine")


# -- what each family is sent -------------------------------------------------------------

HISTORY = ModelRequest(
    messages=[
        Message(role="user", text="remind me"),
        Message(
            role="assistant",
            text="",
            tool_calls=(ToolCall("call_old", "remind", "{}"),),
            reasoning="earlier thoughts",
        ),
        Message(role="tool", tool_call_id="call_old", name="remind", content={"ok": True}),
        Message(role="user", text="and again"),
    ],
    tools=[],
)


@pytest.mark.parametrize("family", [OPENAI, OLLAMA, GENERIC])
async def test_families_that_do_not_need_reasoning_back_are_never_sent_it(
    server: FakeOpenAIServer, family: str
) -> None:
    fake = provider(family)
    server.push(fake.answer(content="ok"))

    async with adapter_for(server, family) as adapter:
        await adapter.complete(HISTORY)

    assert "earlier thoughts" not in server.requests[0].body.decode()
    assert fake.refusals == []


async def test_the_openai_server_refuses_reasoning_sent_where_it_does_not_belong(
    server: FakeOpenAIServer,
) -> None:
    # The same history through the DeepSeek profile: the strict server says no,
    # which is why the openai profile never passes reasoning back.
    fake = provider(OPENAI)
    server.push(fake.answer(content="unreachable"))

    async with adapter_for(server, DEEPSEEK) as adapter:
        with pytest.raises(ModelError) as caught:
            await adapter.complete(HISTORY)

    assert caught.value.code == "model_request_rejected"
    assert "('reasoning_content' was unexpected)" in caught.value.message


async def test_ollama_is_told_to_stop_thinking_with_its_none_effort(
    server: FakeOpenAIServer,
) -> None:
    server.push(provider(OLLAMA).answer(content="quick"))

    async with adapter_for(server, OLLAMA, thinking="disabled", temperature=0.2) as adapter:
        await adapter.complete(HELLO)

    body = server.requests[0].json()
    assert (body["reasoning_effort"], body["temperature"]) == ("none", 0.2)
    assert "thinking" not in body


async def test_deepseek_gets_its_thinking_switch_and_no_sampling_while_thinking(
    server: FakeOpenAIServer,
) -> None:
    server.push(provider(DEEPSEEK).answer(reasoning="hm", content="ok"))

    async with adapter_for(
        server, DEEPSEEK, thinking="enabled", reasoning_effort="max", temperature=0.2, top_p=0.5
    ) as adapter:
        await adapter.complete(HELLO, on_delta=Channels().sink)

    body = server.requests[0].json()
    assert body["thinking"] == {"type": "enabled"}
    assert body["reasoning_effort"] == "max"
    assert "temperature" not in body and "top_p" not in body


# -- DeepSeek thinking mode, end to end through an agent ---------------------------------


class RemindArgs(ToolArguments):
    prompt: str
    after_seconds: int


class RemindTool(Tool[RemindArgs]):
    name = "remind"
    description = "sets a reminder"
    arguments = RemindArgs

    def __init__(self) -> None:
        self.calls: list[RemindArgs] = []

    async def run(self, args: RemindArgs, ctx: ToolContext) -> JsonValue:
        self.calls.append(args)
        return {"id": "rem-1", "deliveryMode": "session-local"}


async def test_deepseek_thinking_tool_call_result_answer_with_reasoning_passed_back(
    server: FakeOpenAIServer,
) -> None:
    fake = provider(DEEPSEEK)
    server.push(
        fake.answer(reasoning=THOUGHT, content="", calls=[REMIND]),
        fake.answer(reasoning="It worked; tell them.", content="Reminder rem-1 is set."),
        fake.answer(reasoning="Small talk.", content="You're welcome."),
    )
    live = LiveSessions()
    session = Session.new("ds", cwd="/", created_at=0)
    live.open(session)
    tool = RemindTool()
    frames: list[tuple[str, str]] = []

    async with adapter_for(server, DEEPSEEK) as adapter, anyio.create_task_group() as group:
        agent = Agent(session=session, live=live, model=adapter, group=group)
        agent.tools.register(tool)
        agent.add_delta_listener(lambda text: frames.append(("answer", text)))
        agent.add_delta_listener(
            lambda text: frames.append(("reasoning", text)), channel="reasoning"
        )
        agent.submit("remind me in 10 seconds to stretch")
        with anyio.fail_after(WAIT):
            await agent.when_idle()
        agent.submit("thanks")
        with anyio.fail_after(WAIT):
            await agent.when_idle()
        await agent.aclose()

    assert fake.refusals == []
    assert [args.prompt for args in tool.calls] == ["stretch"]
    assert [(e.type, e.data.get("status")) for e in session.events] == [
        ("message/user", None),
        ("message/assistant", None),
        ("tool/result", None),
        ("message/assistant", None),
        ("turn/end", "ok"),
        ("message/user", None),
        ("message/assistant", None),
        ("turn/end", "ok"),
    ]
    assistants = [e.data for e in session.events if e.type == "message/assistant"]
    assert [(a["text"], a.get("reasoning")) for a in assistants] == [
        ("", THOUGHT),
        ("Reminder rem-1 is set.", "It worked; tell them."),
        ("You're welcome.", "Small talk."),
    ]
    # Nothing the model thought leaked into what it said, stored or streamed.
    for text in [a["text"] for a in assistants] + [t for c, t in frames if c == "answer"]:
        assert "thought" not in text.lower() and THOUGHT not in text
    assert "".join(t for c, t in frames if c == "reasoning") == (
        THOUGHT + "It worked; tell them." + "Small talk."
    )
    # Every later request carried the tool turn's reasoning back, and only that turn's.
    second, third = server.requests[1].json(), server.requests[2].json()
    assert [m.get("reasoning_content") for m in second["messages"] if m["role"] == "assistant"] == [
        THOUGHT
    ]
    assert [m.get("reasoning_content") for m in third["messages"] if m["role"] == "assistant"] == [
        THOUGHT,
        "It worked; tell them.",
    ]


async def test_the_deepseek_server_refuses_a_tool_turn_whose_reasoning_was_dropped(
    server: FakeOpenAIServer,
) -> None:
    # What dsh did before pass-back existed (the generic profile sends no reasoning):
    # the very next request after a tool call is refused.
    fake = provider(DEEPSEEK)
    server.push(
        fake.answer(reasoning=THOUGHT, calls=[REMIND]),
        fake.answer(content="never sent"),
    )
    async with adapter_for(server, GENERIC) as adapter:
        first = await adapter.complete(HELLO, on_delta=Channels().sink)
        follow_up = ModelRequest(
            messages=[
                *HELLO.messages,
                Message(role="assistant", tool_calls=first.tool_calls, reasoning=first.reasoning),
                Message(role="tool", tool_call_id="call_r1", name="remind", content={"id": "x"}),
            ],
            tools=[],
        )
        with pytest.raises(ModelError) as caught:
            await adapter.complete(follow_up, on_delta=Channels().sink)

    assert caught.value.code == "model_request_rejected"
    assert f"HTTP 400: {PASS_BACK_REFUSAL}" in caught.value.message
    assert fake.refusals == [PASS_BACK_REFUSAL]


async def test_sampling_settings_that_will_not_be_sent_are_named_once_at_start_up(
    server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="dsh.models.openai"):
        async with adapter_for(server, DEEPSEEK, temperature=0.2, top_p=0.9):
            pass
        async with adapter_for(server, DEEPSEEK, thinking="disabled", temperature=0.2):
            pass
        async with adapter_for(server, OLLAMA, thinking="enabled", temperature=0.2):
            pass

    assert [record.getMessage() for record in caplog.records] == [
        "not sent to DeepSeek while the model thinks: temperature, top_p "
        '(set thinking = "disabled" to use them)'
    ]
