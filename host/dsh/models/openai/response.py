"""Reading chat-completions answers: whole JSON replies, streamed chunks, error bodies.

The server's JSON is foreign data: the models below read only the fields dsh
uses and ignore the rest (servers add their own), but the fields they read are
strictly typed, and anything malformed is a `ModelError("bad_response")` that
says what was wrong. Only the first choice is used.

Reasoning comes in a field that depends on the provider (`reasoning_content`
for DeepSeek, `reasoning` for Ollama, ...): the caller names the fields its
profile reads (`reasoning_fields`), the first one present is used, and one
that is not a string is a `bad_response` naming it. Fields no profile reads
are ignored. The builder remembers which field the reasoning came in
(`ReplyBuilder.reasoning_field`): the adapter echoes some back (`profiles`).

Streamed tool calls arrive as fragments keyed by `index`: the first fragment
of a call carries its `id` and function `name`, later ones append to its
`arguments`. Servers that omit `index` are followed by `id` (a new id starts a
new call; no id continues the latest). Calls come out ordered by index, with
their arguments as the raw text the model produced, valid JSON or not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ...base.validation import describe
from ..base import ModelReply, ToolCall
from ..errors import ModelError

__all__ = [
    "Chunk",
    "ReplyBuilder",
    "error_detail",
    "parse_chunk",
    "parse_completion",
    "read_completion",
    "snippet",
]

_SNIPPET = 300


class _Foreign(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class _Function(_Foreign):
    name: str | None = None
    arguments: str | dict[str, Any] | None = None


class _ToolCall(_Foreign):
    index: int | None = None
    id: str | None = None
    function: _Function | None = None


class _Said(_Foreign):
    """A message or a delta: its text, its tool calls, and provider fields kept raw."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    content: str | None = None
    tool_calls: list[_ToolCall] | None = None

    def reasoning(self, fields: Sequence[str]) -> tuple[str, str] | None:
        """The first of `fields` present and the reasoning in it.

        Raises `ModelError("bad_response")` when that field is not a string.
        """
        extra = self.model_extra or {}
        for name in fields:
            value = extra.get(name)
            if value is None:
                continue
            if not isinstance(value, str):
                raise ModelError(
                    "bad_response",
                    f"the reply's {name} is {type(value).__name__}, not a string",
                )
            return name, value
        return None


class _Message(_Said):
    pass


class _Choice(_Foreign):
    index: int = 0
    message: _Message


class _Completion(_Foreign):
    choices: list[_Choice]


class _Delta(_Said):
    pass


class _ChunkChoice(_Foreign):
    index: int = 0
    delta: _Delta | None = None
    finish_reason: str | None = None


class Chunk(_Foreign):
    """One streamed `chat.completion.chunk` (usage-only chunks have no choices)."""

    choices: list[_ChunkChoice] = []

    @property
    def first(self) -> _ChunkChoice | None:
        return next((choice for choice in self.choices if choice.index == 0), None)


def snippet(text: str) -> str:
    """`text` stripped and cut to a length that fits in an error message."""
    text = text.strip()
    return text if len(text) <= _SNIPPET else f"{text[:_SNIPPET]}…"


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise ModelError("bad_response", f"{what} is not JSON: {snippet(text)!r}") from None
    except RecursionError:
        raise ModelError("bad_response", f"{what} is nested too deep to read") from None


def _server_error(data: Any) -> str | None:
    """The message of an `{"error": ...}` object, if `data` is one."""
    error = data.get("error") if isinstance(data, dict) else None
    if error is None:
        return None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return error if isinstance(error, str) else snippet(json.dumps(error))


def parse_completion(text: str, reasoning_fields: Sequence[str] = ()) -> ModelReply:
    """A whole (non-streamed) reply. Raises `ModelError("bad_response")`."""
    return read_completion(text, reasoning_fields).reply()


def read_completion(text: str, reasoning_fields: Sequence[str] = ()) -> ReplyBuilder:
    """A whole reply, read into a builder (which knows its reasoning's field).

    Raises `ModelError("bad_response")`.
    """
    data = _json(text, "the reply")
    try:
        completion = _Completion.model_validate(data)
    except ValidationError as error:
        raise ModelError(
            "bad_response", f"the reply is malformed: {describe(error, root='body')}"
        ) from None
    choice = next((choice for choice in completion.choices if choice.index == 0), None)
    if choice is None:
        raise ModelError("bad_response", "the reply has no choices")
    builder = ReplyBuilder()
    found = choice.message.reasoning(reasoning_fields)
    if found is not None:
        builder.add_reasoning(found[1], field=found[0])
    builder.add_text(choice.message.content or "")
    for position, call in enumerate(choice.message.tool_calls or ()):
        builder.add_tool_call(call.model_copy(update={"index": position}))
    return builder


def parse_chunk(text: str) -> Chunk:
    """One streamed chunk. A chunk that reports a server error, or is malformed,
    raises `ModelError` (`model_unavailable` or `bad_response`)."""
    data = _json(text, "a streamed chunk")
    message = _server_error(data)
    if message is not None:
        raise ModelError(
            "model_unavailable", f"the server reported an error while streaming: {message}"
        )
    try:
        return Chunk.model_validate(data)
    except ValidationError as error:
        raise ModelError(
            "bad_response", f"a streamed chunk is malformed: {describe(error, root='body')}"
        ) from None


def error_detail(body: str) -> str:
    """The human part of an error response body (OpenAI, Ollama, vLLM, FastAPI styles)."""
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return snippet(body) or "(empty body)"
    message = _server_error(data)
    if message is None and isinstance(data, dict):
        found = data.get("message", data.get("detail"))
        message = found if isinstance(found, str) else None
    return snippet(message if message is not None else body)


@dataclass(slots=True)
class _Slot:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ReplyBuilder:
    """Accumulates reasoning, text and tool-call fragments into the final `ModelReply`.

    `reasoning_field` is the wire field non-empty reasoning first came in, if any.
    """

    def __init__(self) -> None:
        self.reasoning_field: str | None = None
        self._reasoning: list[str] = []
        self._text: list[str] = []
        self._slots: dict[int, _Slot] = {}
        self._latest: int | None = None

    def add_text(self, text: str) -> None:
        self._text.append(text)

    def add_reasoning(self, text: str, *, field: str | None = None) -> None:
        if text and field is not None and self.reasoning_field is None:
            self.reasoning_field = field
        self._reasoning.append(text)

    def add_tool_call(self, fragment: _ToolCall) -> None:
        """Merge one (possibly partial) tool call into its slot."""
        key = self._key(fragment)
        slot = self._slots.setdefault(key, _Slot())
        self._latest = key
        if fragment.id and not slot.id:
            slot.id = fragment.id
        function = fragment.function
        if function is None:
            return
        if function.name and not slot.name:
            slot.name = function.name
        arguments = function.arguments
        if isinstance(arguments, dict):
            # As text, like streamed arguments: the pipeline checks them (NaN, depth, size).
            slot.arguments.append(json.dumps(arguments, ensure_ascii=False))
        elif arguments:
            slot.arguments.append(arguments)

    def _key(self, fragment: _ToolCall) -> int:
        if fragment.index is not None:
            return fragment.index
        if fragment.id:
            for key, slot in self._slots.items():
                if slot.id == fragment.id:
                    return key
            return max(self._slots, default=-1) + 1
        return self._latest if self._latest is not None else 0

    def reply(self) -> ModelReply:
        """The whole reply. Raises `ModelError("bad_response")` for a call without a name."""
        calls = []
        for key in sorted(self._slots):
            slot = self._slots[key]
            if not slot.name:
                raise ModelError(
                    "bad_response", f"tool call {key} in the reply has no function name"
                )
            calls.append(
                ToolCall(
                    id=slot.id or f"call_{key}", name=slot.name, arguments="".join(slot.arguments)
                )
            )
        return ModelReply(
            text="".join(self._text),
            tool_calls=tuple(calls),
            reasoning="".join(self._reasoning) or None,
        )
