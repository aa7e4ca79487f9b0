"""The `demo` model: the offline default, deterministic, and honest about being a demo.

It answers from the conversation alone (no network, no randomness):

- a user message it understands as a reminder request (see `intents`) becomes
  a call to `schedule_create`, `schedule_list` or `schedule_delete` — if that
  tool is offered in the request; otherwise it says reminders are not enabled
  in this host and how to enable them. The call comes with a short reasoning,
  labelled as the demo's canned text, so the reasoning path runs offline;
- after tool results it answers in plain words (the id, the due time in UTC
  and "session-local" for a created reminder; each reminder or "no
  reminders"; deleted or not found; an error's code and message);
- a follow-up queued by the schedule plugin (`source.kind == "schedule"`) is
  answered with the reminder itself;
- anything else gets a short help text: what it is, what it understands, and
  how to configure a real model.

It answers in Chinese when the user wrote Chinese, and streams its reasoning
(on the reasoning channel) and its text through `on_delta` in a few fragments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio

from ...tools import ToolCall
from ..base import DeltaSink, Message, ModelReply, ModelRequest
from ..streaming import stream_reply
from . import replies
from .intents import Create, Delete, List, Unclear, has_chinese, read_intent, reminder_prompt

__all__ = ["DemoModel", "answer"]

_SCHEDULE_TOOLS = ("schedule_create", "schedule_list", "schedule_delete")


class DemoModel:
    """The offline demo adapter."""

    name = "demo"

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        """Answer deterministically from `request`; never raises `ModelError`."""
        await anyio.lowlevel.checkpoint()
        reply = answer(request)
        await stream_reply(reply, on_delta)
        return reply


def answer(request: ModelRequest) -> ModelReply:
    """The demo's whole reply to `request` (a pure function of it)."""
    messages = request.messages
    offered = _tool_names(request.tools)
    last = messages[-1] if messages else None
    if last is not None and last.role == "tool":
        results = _trailing_results(messages)
        zh = has_chinese(_last_user_text(messages))
        return ModelReply(text="\n\n".join(replies.tool_result(item, zh) for item in results))
    if last is None or last.role != "user":
        return ModelReply(text=replies.help_text(False, _SCHEDULE_TOOLS[0] in offered))
    if last.source.get("kind") == "schedule":
        return ModelReply(text=replies.reminder(reminder_prompt(last.text)))
    return _respond(last.text, offered, _next_call_number(messages))


def _respond(text: str, offered: set[str], call_number: int) -> ModelReply:
    zh = has_chinese(text)
    intent = read_intent(text)
    if intent is None:
        return ModelReply(text=replies.help_text(zh, _SCHEDULE_TOOLS[0] in offered))
    if isinstance(intent, Unclear):
        enabled = any(name in offered for name in _SCHEDULE_TOOLS)
        return ModelReply(text=replies.unclear(zh) if enabled else replies.not_enabled(zh))
    name, arguments = _tool_request(intent)
    if name not in offered:
        return ModelReply(text=replies.not_enabled(zh))
    call = ToolCall(id=f"call_{call_number}", name=name, arguments=arguments)
    return ModelReply(
        text=replies.calling(intent, zh),
        tool_calls=(call,),
        reasoning=replies.reasoning(intent, name, zh),
    )


def _tool_request(intent: Create | List | Delete) -> tuple[str, dict[str, Any]]:
    if isinstance(intent, Create):
        return "schedule_create", {"prompt": intent.prompt, "after_seconds": intent.after_seconds}
    if isinstance(intent, List):
        return "schedule_list", {}
    return "schedule_delete", {"id": intent.id}


def _tool_names(tools: Sequence[dict[str, Any]]) -> set[str]:
    names = set()
    for schema in tools:
        function = schema.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.add(function["name"])
    return names


def _trailing_results(messages: Sequence[Message]) -> list[Message]:
    """The tool messages after the last non-tool message, in order."""
    results: list[Message] = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        results.append(message)
    return results[::-1]


def _last_user_text(messages: Sequence[Message]) -> str:
    return next((m.text for m in reversed(messages) if m.role == "user"), "")


def _next_call_number(messages: Sequence[Message]) -> int:
    """Call ids count every call in the conversation, so they stay unique in a Session."""
    return 1 + sum(len(m.tool_calls) for m in messages if m.role == "assistant")
