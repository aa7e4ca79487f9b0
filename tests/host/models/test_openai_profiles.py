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
from dsh.models.openai import OpenAIAdapter, OpenAIConfig, resolve_config
from dsh.session.live import LiveSessions
from dsh.session.log import Session
from tests.support.deadlines import WAIT

from .fake_openai import (
    FakeOpenAIServer,
    drop,
    error_reply,
    json_reply,
    running_server,
    sse_reply,
)
from .fake_providers import (
    DEEPSEEK,
    GENERIC,
    GROQ,
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


def gateway_adapter(server: FakeOpenAIServer, model: str) -> OpenAIAdapter:
    """The adapter a person gets from `DSH_MODEL_BASE_URL` at a gateway and `DSH_MODEL`."""
    config = resolve_config(env={"DSH_MODEL_BASE_URL": server.base_url, "DSH_MODEL": model})
    return OpenAIAdapter(config, clock=WatchedClock(), rng=random.Random(1))


class ToolTurns:
    """An agent asked to set a reminder, then thanked: two turns, the first with a tool call."""

    def __init__(self) -> None:
        self.session = Session.new("ds", cwd="/", created_at=0)
        self.tool = RemindTool()
        self.frames: list[tuple[str, str]] = []

    async def run(self, adapter: OpenAIAdapter) -> None:
        live = LiveSessions()
        live.open(self.session)
        async with adapter, anyio.create_task_group() as group:
            agent = Agent(session=self.session, live=live, model=adapter, group=group)
            agent.tools.register(self.tool)
            agent.add_delta_listener(lambda text: self.frames.append(("answer", text)))
            agent.add_delta_listener(
                lambda text: self.frames.append(("reasoning", text)), channel="reasoning"
            )
            agent.submit("remind me in 10 seconds to stretch")
            with anyio.fail_after(WAIT):
                await agent.when_idle()
            agent.submit("thanks")
            with anyio.fail_after(WAIT):
                await agent.when_idle()
            await agent.aclose()

    def shape(self) -> list[tuple[str, object]]:
        return [(e.type, e.data.get("status")) for e in self.session.events]


TWO_TURNS = [
    ("message/user", None),
    ("message/assistant", None),
    ("tool/result", None),
    ("message/assistant", None),
    ("turn/end", "ok"),
    ("message/user", None),
    ("message/assistant", None),
    ("turn/end", "ok"),
]


@pytest.mark.parametrize(
    ("how", "profile"),
    [
        ("the deepseek profile", "deepseek"),
        ("deepseek-v4-pro behind a gateway", "deepseek"),
        ("an alias behind a gateway", "generic"),
    ],
)
async def test_deepseek_thinking_tool_call_result_answer_with_reasoning_passed_back(
    server: FakeOpenAIServer, how: str, profile: str
) -> None:
    # The gateway cases are issue 35's: DSH_MODEL_BASE_URL at a gateway, no
    # DSH_MODEL_PROFILE. The model's name picks the profile; under a name
    # that says nothing, the adapter echoes what the server streamed.
    fake = provider(DEEPSEEK)
    server.push(
        fake.answer(reasoning=THOUGHT, content="", calls=[REMIND]),
        fake.answer(reasoning="It worked; tell them.", content="Reminder rem-1 is set."),
        fake.answer(reasoning="Small talk.", content="You're welcome."),
    )
    adapter = {
        "the deepseek profile": lambda: adapter_for(server, DEEPSEEK),
        "deepseek-v4-pro behind a gateway": lambda: gateway_adapter(server, "deepseek-v4-pro"),
        "an alias behind a gateway": lambda: gateway_adapter(server, "house-reasoner"),
    }[how]()
    assert adapter.config.profile == profile
    turns = ToolTurns()

    await turns.run(adapter)

    assert fake.refusals == []
    assert [args.prompt for args in turns.tool.calls] == ["stretch"]
    assert turns.shape() == TWO_TURNS
    events = turns.session.events
    assistants = [e.data for e in events if e.type == "message/assistant"]
    assert [(a["text"], a.get("reasoning")) for a in assistants] == [
        ("", THOUGHT),
        ("Reminder rem-1 is set.", "It worked; tell them."),
        ("You're welcome.", "Small talk."),
    ]
    # Nothing the model thought leaked into what it said, stored or streamed.
    for text in [a["text"] for a in assistants] + [t for c, t in turns.frames if c == "answer"]:
        assert "thought" not in text.lower() and THOUGHT not in text
    assert "".join(t for c, t in turns.frames if c == "reasoning") == (
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


@pytest.mark.parametrize("family", [OPENAI, GROQ])
async def test_a_server_that_never_streams_reasoning_content_is_never_sent_it(
    server: FakeOpenAIServer, family: str
) -> None:
    # Both refuse fields they do not know; Groq streams its reasoning in `reasoning`.
    fake = provider(family)
    server.push(
        fake.answer(reasoning=THOUGHT, content="", calls=[REMIND]),
        fake.answer(reasoning="It worked.", content="Reminder rem-1 is set."),
        fake.answer(content="You're welcome."),
    )
    turns = ToolTurns()

    await turns.run(gateway_adapter(server, "house-model"))

    assert fake.refusals == []
    assert turns.shape() == TWO_TURNS
    assert len(server.requests) == 3
    assert all(b"reasoning_content" not in request.body for request in server.requests)


async def test_the_deepseek_server_refuses_a_tool_turn_whose_reasoning_was_dropped(
    server: FakeOpenAIServer,
) -> None:
    # What dsh did before the echo and the name rule: DSH_MODEL_BASE_URL at a
    # gateway chose a profile that sends no reasoning back (here the openai one,
    # which never does), and the very next request after a tool call was refused.
    fake = provider(DEEPSEEK)
    server.push(
        fake.answer(reasoning=THOUGHT, calls=[REMIND]),
        fake.answer(content="never sent"),
    )
    async with adapter_for(server, OPENAI) as adapter:
        first = await adapter.complete(HELLO, on_delta=Channels().sink)
        with pytest.raises(ModelError) as caught:
            await adapter.complete(follow_up(first), on_delta=Channels().sink)

    assert caught.value.code == "model_request_rejected"
    assert f"HTTP 400: {PASS_BACK_REFUSAL}" in caught.value.message
    assert fake.refusals == [PASS_BACK_REFUSAL]


def follow_up(first: ModelReply) -> ModelRequest:
    """The request after `first` (a reminder call) was answered."""
    return ModelRequest(
        messages=[
            *HELLO.messages,
            Message(role="assistant", tool_calls=first.tool_calls, reasoning=first.reasoning),
            Message(role="tool", tool_call_id="call_r1", name="remind", content={"id": "x"}),
        ],
        tools=[],
    )


async def test_after_a_restart_the_echo_is_learnt_from_the_servers_refusal(
    server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    # The reasoning was streamed to an earlier process: this one has not seen the
    # server yet, sends none, is refused, and sends the request once more with it.
    fake = provider(DEEPSEEK)
    server.push(
        fake.answer(reasoning=THOUGHT, calls=[REMIND]),
        fake.answer(content="refused"),
        fake.answer(reasoning="Done.", content="Reminder rem-1 is set."),
        fake.answer(content="Still set."),
    )
    async with gateway_adapter(server, "house-reasoner") as earlier:
        first = await earlier.complete(HELLO, on_delta=Channels().sink)

    with caplog.at_level(logging.INFO, logger="dsh.models.openai"):
        async with gateway_adapter(server, "house-reasoner") as later:
            reply = await later.complete(follow_up(first), on_delta=Channels().sink)
            again = await later.complete(follow_up(first))

    assert (reply.text, again.text) == ("Reminder rem-1 is set.", "Still set.")
    assert fake.refusals == [PASS_BACK_REFUSAL]
    sent = [
        [m.get("reasoning_content") for m in request.json()["messages"] if m["role"] == "assistant"]
        for request in server.requests[1:]
    ]
    assert sent == [[None], [THOUGHT], [THOUGHT]]
    assert [record.getMessage() for record in caplog.records] == [
        f"the model server at {server.base_url} asks for reasoning_content back: "
        "passing it back on tool-calling turns"
    ]


TOOL_TURN = ModelRequest(
    messages=[
        *HELLO.messages,
        Message(role="assistant", tool_calls=(ToolCall("call_r1", "remind", "{}"),)),
        Message(role="tool", tool_call_id="call_r1", name="remind", content={"id": "x"}),
    ],
    tools=[],
)


@pytest.mark.parametrize(
    ("refusal", "request_"),
    [
        # Not about the echo: the same request would be refused again.
        ("model 'house-reasoner' does not exist", TOOL_TURN),
        # About the echo, but there is no tool-calling turn to give it to.
        ("reasoning_content is not allowed here", HELLO),
    ],
)
async def test_a_refusal_the_echo_cannot_answer_is_not_sent_again(
    server: FakeOpenAIServer, refusal: str, request_: ModelRequest
) -> None:
    server.push(error_reply(400, refusal), json_reply({"choices": []}))

    async with gateway_adapter(server, "house-reasoner") as adapter:
        with pytest.raises(ModelError) as caught:
            await adapter.complete(request_)

    assert caught.value.code == "model_request_rejected"
    assert f"HTTP 400: {refusal}" in caught.value.message
    assert len(server.requests) == 1


async def test_a_whole_reply_in_reasoning_content_teaches_the_echo_too(
    server: FakeOpenAIServer,
) -> None:
    fake = provider(DEEPSEEK)
    server.push(fake.answer(reasoning=THOUGHT, calls=[REMIND]), fake.answer(content="ok"))

    async with gateway_adapter(server, "house-reasoner") as adapter:
        first = await adapter.complete(HELLO)
        reply = await adapter.complete(follow_up(first))

    assert reply.text == "ok"
    assert fake.refusals == []


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
