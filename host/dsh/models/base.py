"""The model adapter interface.

An adapter receives the conversation as neutral `Message`s plus the tool
schemas and returns one `ModelReply`: the assistant's text, its tool calls
and, when the model reasons before answering (DeepSeek's thinking mode, for
one), its reasoning. Only the final reply is stored (`message/assistant`,
with the reasoning in its optional `reasoning` field).

Streaming adapters report text as it grows through the optional `on_delta`
callback: `on_delta(text)` receives fragments of the answer. A caller that
also wants the reasoning as it streams passes a sink with a `reasoning`
method as well (a `ReasoningSink`, e.g. `StreamSink(answer, reasoning)`);
adapters reach that channel through `reasoning_channel(on_delta)`, so a plain
one-argument callable keeps working and simply never hears the reasoning.
Reasoning never reaches the answer channel.

Failures are `ModelError(code, message)`; the turn driver turns them into
`turn/end {status: "error", error: {code, message}}`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import JsonValue

__all__ = [
    "DeltaSink",
    "Message",
    "ModelAdapter",
    "ModelReply",
    "ModelRequest",
    "ReasoningSink",
    "StreamSink",
    "describe_model",
    "reasoning_channel",
]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call requested by the model. `arguments` is the raw JSON text or a dict."""

    id: str
    name: str
    arguments: str | dict[str, Any]


@dataclass(frozen=True, slots=True)
class Message:
    """One conversation message in a provider-neutral form.

    - `user`: `text`, `source` (`{"kind": "user"}` or the plugin that queued it),
      `time_zone` (the IANA zone the person wrote from, when the client said)
      and `time` (epoch ms when the message was stored; None when unknown);
    - `assistant`: `text`, `tool_calls`, and `reasoning` (None when the model gave none);
    - `tool`: `tool_call_id`, `name`, and `content` (the JSON value or error).

    Adapters send providers only what their wire format has; `time_zone` and
    `time` are for adapters that reason about the person's clock (the demo).
    """

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    source: dict[str, JsonValue] = field(default_factory=dict)
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    name: str = ""
    content: JsonValue = None
    is_error: bool = False
    reasoning: str | None = None
    time_zone: str | None = None
    time: int | None = None


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What an adapter is asked: the messages so far and the tools it may call."""

    messages: Sequence[Message]
    tools: Sequence[dict[str, Any]]
    session_id: str = ""


@dataclass(frozen=True, slots=True)
class ModelReply:
    """The assistant's answer: text, the tool calls to run (in order), and its reasoning.

    `reasoning` is None when the model gave none; it is never part of `text`.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None


DeltaSink = Callable[[str], None]


@runtime_checkable
class ReasoningSink(Protocol):
    """An `on_delta` that also listens to reasoning.

    `sink(text)` receives answer fragments, `sink.reasoning(text)` reasoning fragments.
    """

    def __call__(self, text: str, /) -> None: ...

    def reasoning(self, text: str, /) -> None: ...


@dataclass(frozen=True, slots=True)
class StreamSink:
    """A `ReasoningSink` made of two callables, one per channel."""

    answer: DeltaSink
    thoughts: DeltaSink

    def __call__(self, text: str, /) -> None:
        self.answer(text)

    def reasoning(self, text: str, /) -> None:
        self.thoughts(text)


def reasoning_channel(on_delta: DeltaSink | None) -> DeltaSink | None:
    """Where to report reasoning fragments: `on_delta.reasoning`, or None if it has none."""
    return on_delta.reasoning if isinstance(on_delta, ReasoningSink) else None


@runtime_checkable
class ModelAdapter(Protocol):
    """Anything that can answer a `ModelRequest`.

    The Host that runs an adapter owns it: it calls the adapter's
    `attach(context)` once when the Host is made, if the adapter has one
    (with a `dsh.ModelContext`: the demo takes its plugins' skills from it),
    and its `aclose()` when the Host closes, if it has one. An optional
    `description` says which model it is for the start-up log (`dsh web`:
    "model: …"; see `describe_model`); it never holds a credential.
    """

    name: str

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        """Answer `request`; call `on_delta(text)` with each streamed answer fragment
        (and `reasoning_channel(on_delta)` with each reasoning fragment, if any).

        Raises `ModelError` on failure. Must be cancellable.
        """
        ...


def describe_model(adapter: ModelAdapter) -> str:
    """Which model `adapter` is, for a person: its `description` when it has one (a string),
    else its `name`."""
    description = getattr(adapter, "description", None)
    return description if isinstance(description, str) and description else adapter.name
