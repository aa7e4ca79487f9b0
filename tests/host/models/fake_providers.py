"""Loopback servers that speak exactly one provider family each (DeepSeek, OpenAI, Ollama, generic).

A `Provider` is the behaviour of one family's chat-completions server, to be
queued on a `FakeOpenAIServer` like any other reply: `provider.answer(...)`
first checks the request the way that provider does, then answers the way it
streams. Every streamed answer has the parts real servers send and the
adapter must cope with: a role-only first chunk, a keep-alive comment,
reasoning deltas before the content (in the family's own field), tool-call
arguments in fragments, a finish chunk, a usage chunk with empty `choices`,
and `[DONE]`. A whole (non-streamed) answer carries the reasoning in the
message.

What each one refuses, as the real provider documents it:

- DeepSeek (thinking mode): an assistant message that carried tool calls
  without its `reasoning_content` — exactly the reasoning this server
  streamed with those calls — answers HTTP 400 "The reasoning_content in the
  thinking mode must be passed back to the API." So a test fails if the
  pass-back regresses.
- OpenAI: any field it does not know, in the body (`thinking`) or in a
  message (`reasoning_content`), answers HTTP 400.
- Groq: streams its reasoning in `reasoning` and refuses unknown fields as
  OpenAI does, so `reasoning_content` sent back is refused.
- Ollama and generic servers accept what they do not need.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .fake_openai import Exchange, Reply, error_reply, json_reply, raw_reply

__all__ = [
    "DEEPSEEK",
    "GENERIC",
    "GROQ",
    "OLLAMA",
    "OPENAI",
    "PASS_BACK_REFUSAL",
    "Call",
    "Provider",
    "provider",
    "rate_limited",
]

PASS_BACK_REFUSAL = "The reasoning_content in the thinking mode must be passed back to the API."
_OPENAI_MESSAGE_FIELDS = frozenset({"role", "content", "name", "tool_calls", "tool_call_id"})
_OPENAI_BODY_FIELDS = frozenset(
    {"model", "messages", "stream", "tools", "reasoning_effort", "temperature", "top_p"}
)


@dataclass(frozen=True)
class Call:
    """A tool call the fake model makes: its arguments are streamed in `pieces` fragments."""

    id: str
    name: str
    arguments: dict[str, Any]
    pieces: int = 3


def _pieces(text: str, count: int) -> list[str]:
    size = max(1, -(-len(text) // max(count, 1)))
    return [text[start : start + size] for start in range(0, len(text), size)] or [""]


@dataclass
class Provider:
    """One family's server (see the module docstring).

    `reasoning_field` is where it puts reasoning (None: it sends none);
    `issued` remembers, per tool call id, the reasoning streamed with it;
    `refusals` counts the requests it refused.
    """

    name: str
    reasoning_field: str | None
    requires_pass_back: bool = False
    strict_fields: bool = False
    content_while_thinking: bool = False
    issued: dict[str, str] = field(default_factory=dict)
    refusals: list[str] = field(default_factory=list)

    # -- what it refuses ----------------------------------------------------------

    def refusal(self, body: dict[str, Any]) -> str | None:
        """Why this provider would answer 400 to `body`, or None."""
        if self.strict_fields:
            for key in body:
                if key not in _OPENAI_BODY_FIELDS:
                    return f"Unrecognized request argument supplied: {key}"
            for index, message in enumerate(body["messages"]):
                for key in message:
                    if key not in _OPENAI_MESSAGE_FIELDS:
                        return (
                            f"Invalid value for 'messages[{index}]': additional properties "
                            f"are not allowed ('{key}' was unexpected)"
                        )
        if self.requires_pass_back:
            for message in body["messages"]:
                calls = message.get("tool_calls") or []
                if message["role"] != "assistant" or not calls:
                    continue
                passed = message.get("reasoning_content")
                expected = next((self.issued[c["id"]] for c in calls if c["id"] in self.issued), "")
                if not isinstance(passed, str) or passed != expected:
                    return PASS_BACK_REFUSAL
        return None

    # -- how it answers --------------------------------------------------------------

    def answer(
        self,
        *,
        reasoning: str = "",
        content: str = "",
        calls: Sequence[Call] = (),
        pieces: int = 3,
    ) -> Reply:
        """A reply script: refuse like this provider would, else answer (streamed if asked)."""

        async def reply(exchange: Exchange) -> None:
            body = exchange.request.json()
            problem = self.refusal(body)
            if problem is not None:
                self.refusals.append(problem)
                await error_reply(400, problem)(exchange)
                return
            for call in calls:
                self.issued[call.id] = reasoning
            if body.get("stream"):
                chunks = self._chunks(reasoning, content, calls, pieces)
                await raw_reply(200, chunks, [("content-type", "text/event-stream")])(exchange)
            else:
                await json_reply(self._completion(reasoning, content, calls))(exchange)

        return reply

    def _delta_chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        chunk = {
            "id": f"chatcmpl-{self.name}",
            "object": "chat.completion.chunk",
            "model": self.name,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(chunk)}\n\n".encode()

    def _chunks(
        self, reasoning: str, content: str, calls: Sequence[Call], pieces: int
    ) -> list[bytes]:
        out = [self._delta_chunk({"role": "assistant", "content": ""}), b": keep-alive\n\n"]
        if reasoning and self.reasoning_field is not None:
            for piece in _pieces(reasoning, pieces):
                delta: dict[str, Any] = {self.reasoning_field: piece}
                if self.content_while_thinking:
                    delta["content"] = ""
                out.append(self._delta_chunk(delta))
        if content:
            out.extend(self._delta_chunk({"content": piece}) for piece in _pieces(content, pieces))
        for index, call in enumerate(calls):
            first = {"index": index, "id": call.id, "type": "function"}
            first["function"] = {"name": call.name, "arguments": ""}
            out.append(self._delta_chunk({"tool_calls": [first]}))
            arguments = json.dumps(call.arguments)
            for piece in _pieces(arguments, call.pieces):
                fragment = {"index": index, "function": {"arguments": piece}}
                out.append(self._delta_chunk({"tool_calls": [fragment]}))
        out.append(self._delta_chunk({}, "tool_calls" if calls else "stop"))
        usage = {"id": f"chatcmpl-{self.name}", "choices": [], "usage": {"total_tokens": 42}}
        out.append(f"data: {json.dumps(usage)}\n\n".encode())
        out.append(b"data: [DONE]\n\n")
        return out

    def _completion(self, reasoning: str, content: str, calls: Sequence[Call]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning and self.reasoning_field is not None:
            message[self.reasoning_field] = reasoning
        if calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in calls
            ]
        return {
            "id": f"chatcmpl-{self.name}",
            "object": "chat.completion",
            "model": self.name,
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
            ],
            "usage": {"total_tokens": 42},
        }


def rate_limited(seconds: int, headers: Iterable[tuple[str, str]] = ()) -> Reply:
    """HTTP 429 with `Retry-After: seconds`, the way every family signals a rate limit."""
    return error_reply(429, "Rate limit reached", [("retry-after", str(seconds)), *headers])


DEEPSEEK = "deepseek"
OPENAI = "openai"
OLLAMA = "ollama"
GENERIC = "generic"
GROQ = "groq"


def provider(name: str) -> Provider:
    """A fresh server of the family `name` (each test gets its own `issued` memory)."""
    if name == DEEPSEEK:
        return Provider(DEEPSEEK, "reasoning_content", requires_pass_back=True)
    if name == OPENAI:
        return Provider(OPENAI, None, strict_fields=True)
    if name == OLLAMA:
        return Provider(OLLAMA, "reasoning", content_while_thinking=True)
    if name == GENERIC:
        return Provider(GENERIC, "reasoning_content")
    if name == GROQ:
        return Provider(GROQ, "reasoning", strict_fields=True)
    raise ValueError(f"no fake provider {name!r}")
