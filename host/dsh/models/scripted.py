"""The `scripted` model: replies read from a JSON file, for tests and demonstrations.

The file is a JSON list of replies, used in order (one per model call, shared
by every agent that uses this adapter instance):

    [
      {"text": "Setting it.", "toolCalls": [
          {"name": "schedule_create", "arguments": {"prompt": "stretch", "after_seconds": 10}}]},
      {"text": "Done.", "reasoning": "The tool said the reminder is set."}
    ]

Every key of a reply is optional; `reasoning` is what the model thought
before answering (streamed on the reasoning channel before the text, and
stored in `message/assistant`'s `reasoning`). A call's `id` is optional (missing ids are
`call_<n>`, numbering every call in the file from 1); `arguments` is an object,
or a raw string passed to the tool pipeline unparsed (so a script can show how
invalid arguments are answered), and defaults to `{}`. The file is validated
strictly when it is loaded: a bad file raises `ScriptError` naming the file and
the problem. Once every reply is used, each call fails like `absent`
(`model_unavailable`), saying the script is exhausted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import anyio
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from .absent import UNAVAILABLE
from .base import DeltaSink, ModelReply, ModelRequest, ToolCall
from .errors import ModelError, ScriptError
from .streaming import stream_reply

__all__ = ["ScriptError", "ScriptedModel"]

_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True, populate_by_name=False)
NonEmpty = Annotated[str, Field(min_length=1)]


class _ScriptedCall(BaseModel):
    model_config = _STRICT

    id: NonEmpty | None = None
    name: NonEmpty
    arguments: JsonValue = Field(default_factory=dict)

    @field_validator("arguments")
    @classmethod
    def _object_or_text(cls, value: JsonValue) -> JsonValue:
        if not isinstance(value, dict | str):
            raise ValueError("must be a JSON object or a string of raw JSON text")
        return value


class _ScriptedReply(BaseModel):
    model_config = _STRICT

    text: str = ""
    tool_calls: list[_ScriptedCall] = Field(default_factory=list, alias="toolCalls")
    reasoning: str | None = None


_SCRIPT = TypeAdapter(list[_ScriptedReply])


def _where(location: tuple[int | str, ...]) -> str:
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in location)
    return path.lstrip(".") or "the file"


def _describe(error: ValidationError) -> str:
    return "; ".join(
        f"{_where(item['loc'])}: {item['msg']}" for item in error.errors(include_url=False)
    )


def parse_script(text: str | bytes, source: str = "<script>") -> list[ModelReply]:
    """The replies of a script's JSON text; raises `ScriptError` if it is not valid."""
    try:
        replies = _SCRIPT.validate_json(text)
    except ValidationError as error:
        raise ScriptError(source, _describe(error)) from None
    numbered = 0
    result: list[ModelReply] = []
    for reply in replies:
        calls = []
        for scripted in reply.tool_calls:
            numbered += 1
            arguments = scripted.arguments
            assert isinstance(arguments, dict | str)  # guaranteed by the validator
            calls.append(
                ToolCall(
                    id=scripted.id or f"call_{numbered}", name=scripted.name, arguments=arguments
                )
            )
        result.append(
            ModelReply(text=reply.text, tool_calls=tuple(calls), reasoning=reply.reasoning or None)
        )
    return result


class ScriptedModel:
    """Answers each call with the next scripted reply, streaming it in fragments."""

    name = "scripted"

    def __init__(self, replies: Sequence[ModelReply], source: str = "<script>") -> None:
        self.source = source
        self._replies = tuple(replies)
        self._next = 0

    @property
    def description(self) -> str:
        """`scripted <source>`, for the start-up log."""
        return f"scripted {self.source}"

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """Load and validate a script file; raises `ScriptError` naming the file."""
        path = Path(path)
        try:
            text = path.read_bytes()
        except OSError as error:
            raise ScriptError(str(path), f"cannot read it ({error.strerror or error})") from None
        return cls(parse_script(text, str(path)), source=str(path))

    @property
    def remaining(self) -> int:
        """How many replies are left."""
        return len(self._replies) - self._next

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        """The next reply; `ModelError("model_unavailable")` once the script is exhausted."""
        await anyio.lowlevel.checkpoint()
        if self._next >= len(self._replies):
            raise ModelError(
                UNAVAILABLE,
                f"the model script {self.source} is exhausted: all {len(self._replies)} "
                "scripted replies were used",
            )
        reply = self._replies[self._next]
        self._next += 1
        await stream_reply(reply, on_delta)
        return reply
