"""The chat-completions request body: dsh's conversation in OpenAI's wire format.

Mapping (one neutral `Message` → one wire message):

- `user` → `{"role": "user", "content": text}`;
- `assistant` → `{"role": "assistant", "content": text, "tool_calls": [...]}`
  with each call's `arguments` as a JSON string (`tool_calls` omitted when empty:
  servers reject an empty list);
- `tool` → `{"role": "tool", "tool_call_id", "content"}` where content is the
  JSON text of the value, or of `{"error": {code, message}}`.

The history is repaired where servers would reject it, without changing what
was said:

- every assistant tool call gets exactly one result, directly after it, in
  call order; a call without one (a cancelled turn) gets a synthetic
  `not_completed` error result; results that answer no call are dropped;
- arguments that are not a JSON object (the model sent broken JSON; the tool
  pipeline already answered `invalid_arguments`) are sent as
  `{"unparsed_arguments": "<raw text>"}`, because servers such as Ollama and
  vLLM parse history arguments and would refuse the whole request;
- consecutive user messages (a turn that failed before the model answered)
  are joined, because strict chat templates require alternating roles.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...tools import ToolCall
from ..base import Message, ModelRequest

__all__ = ["NOT_COMPLETED", "SYSTEM_PROMPT", "build_body", "wire_messages"]

SYSTEM_PROMPT = (
    "You are the assistant in dsh, a small agent host. Reminders you create with the "
    "schedule tools are session-local: they belong to this conversation only and fire "
    "only while it is open."
)

NOT_COMPLETED = {
    "code": "not_completed",
    "message": "this tool call did not complete (the turn was interrupted); "
    "whether it had any effect is unknown",
}

WireMessage = dict[str, Any]


def build_body(request: ModelRequest, *, model: str, stream: bool) -> dict[str, Any]:
    """The JSON body for `POST {base_url}/chat/completions` (minimal: no optional fields)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": wire_messages(request.messages),
        "stream": stream,
    }
    if request.tools:
        body["tools"] = list(request.tools)
    return body


def wire_messages(messages: Sequence[Message]) -> list[WireMessage]:
    """The system prompt followed by the repaired conversation."""
    wire: list[WireMessage] = [{"role": "system", "content": SYSTEM_PROMPT}]
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if message.role == "user":
            previous = wire[-1]
            if previous["role"] == "user":
                previous["content"] = f"{previous['content']}\n\n{message.text}"
            else:
                wire.append({"role": "user", "content": message.text})
        elif message.role == "assistant":
            results: list[Message] = []
            while index < len(messages) and messages[index].role == "tool":
                results.append(messages[index])
                index += 1
            wire.extend(_assistant_turn(message, results))
        # A tool result that follows no assistant message answers nothing: dropped.
    return wire


def _assistant_turn(message: Message, results: list[Message]) -> list[WireMessage]:
    wire: WireMessage = {"role": "assistant", "content": message.text}
    if not message.tool_calls:
        return [wire]
    wire["tool_calls"] = [_call(call) for call in message.tool_calls]
    by_id: dict[str, Message] = {}
    for result in results:
        by_id.setdefault(result.tool_call_id, result)
    out = [wire]
    for call in message.tool_calls:
        answer = by_id.get(call.id)
        content: Any = {"error": NOT_COMPLETED}
        if answer is not None:
            content = {"error": answer.content} if answer.is_error else answer.content
        out.append(
            {
                "role": "tool",
                "tool_call_id": call.id,
                "content": json.dumps(content, ensure_ascii=False),
            }
        )
    return out


def _call(call: ToolCall) -> WireMessage:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": _arguments(call.arguments)},
    }


def _arguments(arguments: str | dict[str, Any]) -> str:
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False)
    if not arguments.strip():
        return "{}"
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict):
        return arguments
    return json.dumps({"unparsed_arguments": arguments}, ensure_ascii=False)
