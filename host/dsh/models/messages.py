"""Turning a Session's events into the neutral conversation adapters read.

Only host-owned conversation events become messages: `message/user`,
`message/assistant` and `tool/result`. Markers (`session/end-seed`,
`turn/end`, `session/title`) and plugin events are not part of what the
model is told. Each conversation event is decoded with its typed payload
(`dsh.events`); one whose data does not have its type's shape raises
`PayloadError` naming it, rather than being guessed at. An assistant message
keeps its stored `reasoning`: whether a provider is sent it back is the
adapter's rule, not this builder's. A user message keeps its `timeZone` and
its event's `time` (what the demo model reads "tomorrow" against).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..session.event import SessionEvent
from ..session.events import AssistantMessage, ToolResult, UserMessage, decode
from ..session.types import ASSISTANT_MESSAGE, TOOL_RESULT, USER_MESSAGE
from .base import Message, ToolCall

__all__ = ["conversation"]

_CONVERSATION = frozenset({USER_MESSAGE, ASSISTANT_MESSAGE, TOOL_RESULT})


def conversation(events: Iterable[SessionEvent]) -> list[Message]:
    """The messages a model sees for these events, oldest first.

    Raises `dsh.session.events.PayloadError` for a conversation event of the wrong shape.
    """
    messages: list[Message] = []
    for event in events:
        if event.type not in _CONVERSATION:
            continue
        payload = decode(event)
        if isinstance(payload, UserMessage):
            messages.append(
                Message(
                    role="user",
                    text=payload.text,
                    source=payload.source.data(),
                    time_zone=payload.time_zone,
                    time=event.time,
                )
            )
        elif isinstance(payload, AssistantMessage):
            calls = tuple(
                ToolCall(id=call.id, name=call.name, arguments=call.arguments)
                for call in payload.tool_calls
            )
            messages.append(
                Message(
                    role="assistant",
                    text=payload.text,
                    tool_calls=calls,
                    reasoning=payload.reasoning,
                )
            )
        else:
            assert isinstance(payload, ToolResult)
            error = payload.error
            messages.append(
                Message(
                    role="tool",
                    tool_call_id=payload.call_id,
                    name=payload.name,
                    content=payload.value if error is None else error.data(),
                    is_error=error is not None,
                )
            )
    return messages
