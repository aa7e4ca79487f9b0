"""The chat-completions request body: dsh's conversation in OpenAI's wire format.

Mapping (one neutral `Message` → one wire message):

- `user` → `{"role": "user", "content": text}`; a message the person wrote
  from a known zone (`time_zone`, `time`) starts with one line saying when,
  in that zone and in UTC: `[sent 2026-01-05T08:30+01:00 (Europe/Berlin) =
  2026-01-05T07:30Z]`, so a real model reads "at 9" and "tomorrow" in the
  person's clock (the system prompt says so). Each line is fixed by its own
  message, so earlier messages never change and providers' prompt caches
  keep working; a plugin's message (a reminder's frame) already names its
  zone and gets none;
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

Reasoning is sent back only where the profile says it must be
(`Profile.pass_back`, see `profiles`): for DeepSeek, `reasoning_content` on
every assistant message of a turn (the messages between two user messages)
that made tool calls, `""` where none was stored; and by the same rule,
`echo` names the field the caller has seen the server stream its reasoning
in and wants back (the `generic` profile's `reasoning_content`). Nowhere
else: providers such as OpenAI refuse fields they do not know.

The body carries the thinking settings the way the profile documents them,
and `temperature`/`top_p` only while the model is not thinking (a thinking
model ignores or refuses them).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..base import Message, ModelRequest, ToolCall
from .config import OpenAIConfig

__all__ = ["NOT_COMPLETED", "SYSTEM_PROMPT", "build_body", "wire_messages"]

SYSTEM_PROMPT = (
    "You are the assistant in dsh, a small agent host. Reminders you create with the "
    "schedule tools are session-local: they belong to this conversation only and fire "
    "only while it is open. A message from the person may start with a line like "
    "[sent 2026-01-05T08:30+01:00 (Europe/Berlin) = 2026-01-05T07:30Z]: that is when "
    "they sent it, in their time zone and in UTC. Read the times they mention in that "
    "zone, pass it as time_zone to the schedule tools, and name times in it."
)

NOT_COMPLETED = {
    "code": "not_completed",
    "message": "this tool call did not complete (the turn was interrupted); "
    "whether it had any effect is unknown",
}

WireMessage = dict[str, Any]


def build_body(
    request: ModelRequest, config: OpenAIConfig, *, stream: bool, echo: str | None = None
) -> dict[str, Any]:
    """The JSON body for `POST {base_url}/chat/completions`: nothing the settings leave unset.

    Reasoning goes back in the profile's `pass_back` field, else in `echo` (module docstring).
    """
    profile = config.provider
    body: dict[str, Any] = {
        "model": config.model,
        "messages": wire_messages(request.messages, pass_back=profile.pass_back or echo),
        "stream": stream,
    }
    if request.tools:
        body["tools"] = list(request.tools)
    body.update(profile.thinking_fields(config.thinking, config.reasoning_effort))
    ignored = profile.ignored_when_thinking if config.thinking_on else ()
    for name in ("temperature", "top_p"):
        value = getattr(config, name)
        if value is not None and name not in ignored:
            body[name] = value
    return body


def wire_messages(
    messages: Sequence[Message], *, pass_back: str | None = None
) -> list[WireMessage]:
    """The system prompt followed by the repaired conversation.

    `pass_back` names the field that carries reasoning back, or None for never.
    """
    wire: list[WireMessage] = [{"role": "system", "content": SYSTEM_PROMPT}]
    reasoning: dict[int, str] = {}  # wire index of an assistant message -> its reasoning
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if message.role == "user":
            text = _stamped(message)
            previous = wire[-1]
            if previous["role"] == "user":
                previous["content"] = f"{previous['content']}\n\n{text}"
            else:
                wire.append({"role": "user", "content": text})
        elif message.role == "assistant":
            results: list[Message] = []
            while index < len(messages) and messages[index].role == "tool":
                results.append(messages[index])
                index += 1
            reasoning[len(wire)] = message.reasoning or ""
            wire.extend(_assistant_turn(message, results))
        # A tool result that follows no assistant message answers nothing: dropped.
    if pass_back is not None:
        _pass_back(wire, reasoning, pass_back)
    return wire


def _stamped(message: Message) -> str:
    """The person's text, first a line saying when they sent it (module docstring)."""
    if message.source.get("kind", "user") != "user" or message.time is None:
        return message.text
    if not message.time_zone:
        return message.text
    try:
        zone = ZoneInfo(message.time_zone)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        # The host validates zones; a stored oddity (`Europe`, a folder there) is just not stamped.
        return message.text
    sent = datetime.fromtimestamp(message.time / 1000, UTC)
    local = sent.astimezone(zone).isoformat(timespec="minutes")
    utc = sent.strftime("%Y-%m-%dT%H:%MZ")
    return f"[sent {local} ({message.time_zone}) = {utc}]\n{message.text}"


def _pass_back(wire: list[WireMessage], reasoning: dict[int, str], field: str) -> None:
    """Give every assistant message of a turn that made tool calls its reasoning."""
    turn: list[int] = []
    for position, message in enumerate([*wire, {"role": "user"}]):
        if message["role"] == "user":
            if any("tool_calls" in wire[at] for at in turn):
                for at in turn:
                    wire[at][field] = reasoning[at]
            turn = []
        elif position in reasoning:
            turn.append(position)


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
