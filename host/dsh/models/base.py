"""The model adapter interface.

An adapter receives the conversation as neutral `Message`s plus the tool
schemas and returns one `ModelReply` (assistant text and tool calls). Streaming
adapters report text as it grows through the optional `on_delta` callback; the
final reply is still returned whole, and only that is stored.

Failures are `ModelError(code, message)`; the turn driver turns them into
`turn/end {status: "error", error: {code, message}}`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import JsonValue

from ..errors import CodedError
from ..tools import ToolCall

__all__ = ["DeltaSink", "Message", "ModelAdapter", "ModelError", "ModelReply", "ModelRequest"]


class ModelError(CodedError):
    """The model could not answer. `code` is machine-readable, `message` for people."""

    default_status = 502


@dataclass(frozen=True, slots=True)
class Message:
    """One conversation message in a provider-neutral form.

    - `user`: `text`, and `source` (`{"kind": "user"}` or the plugin that queued it);
    - `assistant`: `text` and `tool_calls`;
    - `tool`: `tool_call_id`, `name`, and `content` (the JSON value or error).
    """

    role: Literal["user", "assistant", "tool"]
    text: str = ""
    source: dict[str, JsonValue] = field(default_factory=dict)
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    name: str = ""
    content: JsonValue = None
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What an adapter is asked: the messages so far and the tools it may call."""

    messages: Sequence[Message]
    tools: Sequence[dict[str, Any]]
    session_id: str = ""


@dataclass(frozen=True, slots=True)
class ModelReply:
    """The assistant's answer: text, and the tool calls to run (in order)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


DeltaSink = Callable[[str], None]


@runtime_checkable
class ModelAdapter(Protocol):
    """Anything that can answer a `ModelRequest`."""

    name: str

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        """Answer `request`; call `on_delta(text)` with each streamed text fragment.

        Raises `ModelError` on failure. Must be cancellable.
        """
        ...
