"""Turning a Session's events into the neutral conversation adapters read.

Only host-owned conversation events become messages: `message/user`,
`message/assistant` and `tool/result`. Markers (`session/end-seed`,
`turn/end`) and plugin events are not part of what the model is told.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..session import SessionEvent
from ..tools import ToolCall
from .base import Message

__all__ = ["conversation"]


def conversation(events: Iterable[SessionEvent]) -> list[Message]:
    """The messages a model sees for these events, oldest first."""
    messages: list[Message] = []
    for event in events:
        data = event.data
        if not isinstance(data, dict):
            continue
        if event.type == "message/user":
            source = data.get("source")
            messages.append(
                Message(
                    role="user",
                    text=str(data.get("text", "")),
                    source=dict(source) if isinstance(source, dict) else {"kind": "user"},
                )
            )
        elif event.type == "message/assistant":
            calls = data.get("toolCalls")
            messages.append(
                Message(
                    role="assistant",
                    text=str(data.get("text", "")),
                    tool_calls=tuple(_calls(calls if isinstance(calls, list) else [])),
                )
            )
        elif event.type == "tool/result":
            is_error = "error" in data
            messages.append(
                Message(
                    role="tool",
                    tool_call_id=str(data.get("callId", "")),
                    name=str(data.get("name", "")),
                    content=data.get("error") if is_error else data.get("value"),
                    is_error=is_error,
                )
            )
    return messages


def _calls(items: list[Any]) -> Iterable[ToolCall]:
    for item in items:
        if isinstance(item, dict):
            arguments = item.get("arguments", {})
            yield ToolCall(
                id=str(item.get("id", "")),
                name=str(item.get("name", "")),
                arguments=arguments if isinstance(arguments, str | dict) else {},
            )
