"""The host's own event payloads (public shapes, DESIGN §2, §5, §8b, §9).

The host owns six event types. Each payload is a strict, frozen pydantic
model; `data()` is exactly the `data` the host appends, and `decode(event)`
parses a stored event of a host type back, raising `PayloadError` (naming the
seq, the type and the problem) when its data does not have that shape:

- `message/user` — `{"text", "source", "timeZone"?}`: `source.kind` is
  `"user"` or the plugin that queued it (other keys of `source` belong to that
  plugin); `timeZone` is the IANA zone the person wrote from, when known.
- `message/assistant` — `{"text", "toolCalls": [{"id", "name", "arguments"}],
  "reasoning"?}`: `arguments` is a JSON object, or the raw text the model sent
  when it was not one; `reasoning` is the model's reasoning, when it gave one.
- `tool/result` — `{"callId", "name", "value"}` or `{"callId", "name",
  "error": {"code", "message"}}`.
- `turn/end` — `{"status": "ok"}` or `{"status": "error", "error": {"code", "message"}}`.
- `session/end-seed` — `{}`.
- `session/title` — `{"title"}`: a title a person gave the Session.

Optional keys are omitted when absent (never written as `null`), so events
written before a key existed stay byte-identical when read and written again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Literal, Self
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    model_validator,
)

from ..base.validation import describe
from .errors import PayloadError
from .event import SessionEvent
from .types import ASSISTANT_MESSAGE, END_SEED, SESSION_TITLE, TOOL_RESULT, TURN_END, USER_MESSAGE

__all__ = [
    "HOST_EVENT_TYPES",
    "AssistantMessage",
    "EndSeed",
    "ErrorInfo",
    "HostPayload",
    "SessionTitle",
    "Source",
    "ToolCallRecord",
    "ToolResult",
    "TurnEnd",
    "UserMessage",
    "decode",
    "validate_time_zone",
]


MAX_TITLE_CHARS = 200
# IANA names: `Area/Location[/Sub]`, `UTC`, `Etc/GMT+5`; never a path that could
# climb out of the zone database.
_ZONE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,2}")


def _zone_name(value: str) -> str:
    if len(value) > 64 or _ZONE_NAME.fullmatch(value) is None:
        raise ValueError(f"{value!r} is not an IANA time zone name")
    return value


def validate_time_zone(value: str) -> str:
    """Return `value` if it names a time zone this machine knows (e.g. `Europe/Berlin`).

    Raises `ValueError` naming it otherwise — also for a name of a folder of
    the zone database (`Europe`) or a file there that cannot be read: the
    message names the zone, never a path. Stored events only need the name
    to be well formed (another machine may know other zones); this is the
    check for new input.
    """
    _zone_name(value)
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        # zoneinfo opens `<tzdata>/<name>`: a folder (`Europe`, `US`) is an IsADirectoryError.
        raise ValueError(
            f"unknown time zone {value!r}: expected an IANA name such as 'Europe/Berlin'"
        ) from None
    return value


_PAYLOAD = ConfigDict(strict=True, extra="forbid", frozen=True, populate_by_name=False)
ZoneName = Annotated[str, AfterValidator(_zone_name)]


class Source(BaseModel):
    """Who queued a `message/user`: `kind` plus keys owned by that plugin."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    kind: Annotated[str, Field(min_length=1)]

    def data(self) -> dict[str, JsonValue]:
        return {"kind": self.kind, **(self.model_extra or {})}


class UserMessage(BaseModel):
    """`message/user`."""

    model_config = _PAYLOAD

    text: str
    source: Source
    time_zone: ZoneName | None = Field(default=None, alias="timeZone")

    @property
    def from_user(self) -> bool:
        """True when a person wrote it (not a plugin's follow-up)."""
        return self.source.kind == "user"

    def data(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = {"text": self.text, "source": self.source.data()}
        if self.time_zone is not None:
            data["timeZone"] = self.time_zone
        return data


class ToolCallRecord(BaseModel):
    """One tool call as `message/assistant` stores it."""

    model_config = _PAYLOAD

    id: str
    name: str
    arguments: dict[str, JsonValue] | str

    def data(self) -> dict[str, JsonValue]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


def _list_as_tuple(value: object) -> object:
    # JSON has arrays, records hold tuples: strict mode would refuse the list.
    return tuple(value) if isinstance(value, list) else value


class AssistantMessage(BaseModel):
    """`message/assistant`."""

    model_config = _PAYLOAD

    text: str
    tool_calls: Annotated[tuple[ToolCallRecord, ...], BeforeValidator(_list_as_tuple)] = Field(
        alias="toolCalls"
    )
    reasoning: str | None = None

    def data(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = {
            "text": self.text,
            "toolCalls": [call.data() for call in self.tool_calls],
        }
        if self.reasoning is not None:
            data["reasoning"] = self.reasoning
        return data


class ErrorInfo(BaseModel):
    """`{"code", "message"}`: a machine-readable code and a sentence for people."""

    model_config = _PAYLOAD

    code: Annotated[str, Field(min_length=1)]
    message: str

    def data(self) -> dict[str, JsonValue]:
        return {"code": self.code, "message": self.message}


class ToolResult(BaseModel):
    """`tool/result`: exactly one of `value` (any JSON, `null` included) and `error`."""

    model_config = _PAYLOAD

    call_id: str = Field(alias="callId")
    name: str
    value: JsonValue = None
    error: ErrorInfo | None = None

    @model_validator(mode="after")
    def _one_outcome(self) -> Self:
        has_value = "value" in self.model_fields_set
        if has_value == (self.error is not None):
            raise ValueError("a tool result has exactly one of 'value' and 'error'")
        return self

    @property
    def ok(self) -> bool:
        return self.error is None

    def data(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = {"callId": self.call_id, "name": self.name}
        if self.error is not None:
            data["error"] = self.error.data()
        else:
            data["value"] = self.value
        return data


class TurnEnd(BaseModel):
    """`turn/end`: `ok`, or `error` with what went wrong."""

    model_config = _PAYLOAD

    status: Literal["ok", "error"]
    error: ErrorInfo | None = None

    @model_validator(mode="after")
    def _error_iff_failed(self) -> Self:
        if (self.status == "error") != (self.error is not None):
            raise ValueError("'error' is present exactly when status is 'error'")
        return self

    def data(self) -> dict[str, JsonValue]:
        if self.error is None:
            return {"status": self.status}
        return {"status": self.status, "error": self.error.data()}


class EndSeed(BaseModel):
    """`session/end-seed`: `{}`, where a fork's seed or a live lifecycle begins."""

    model_config = _PAYLOAD

    def data(self) -> dict[str, JsonValue]:
        return {}


def _title(value: str) -> str:
    if value != value.strip() or not value:
        raise ValueError("a title is not empty and does not start or end with whitespace")
    return value


class SessionTitle(BaseModel):
    """`session/title`: the title a person gave the Session."""

    model_config = _PAYLOAD

    title: Annotated[str, Field(max_length=MAX_TITLE_CHARS), AfterValidator(_title)]

    def data(self) -> dict[str, JsonValue]:
        return {"title": self.title}


HostPayload = UserMessage | AssistantMessage | ToolResult | TurnEnd | EndSeed | SessionTitle

HOST_EVENT_TYPES: Mapping[str, type[HostPayload]] = MappingProxyType(
    {
        USER_MESSAGE: UserMessage,
        ASSISTANT_MESSAGE: AssistantMessage,
        TOOL_RESULT: ToolResult,
        TURN_END: TurnEnd,
        END_SEED: EndSeed,
        SESSION_TITLE: SessionTitle,
    }
)


def decode(event: SessionEvent) -> HostPayload:
    """The payload of a stored host event; `PayloadError` if its data is not its shape.

    Raises `KeyError` for an event type the host does not own.
    """
    model = HOST_EVENT_TYPES[event.type]
    data = _as_object(event)
    for key in _OPTIONAL_KEYS[model]:
        if key in data and data[key] is None:
            # An optional key is absent or has a value: a `null` would not survive
            # a write and a read as the same bytes.
            raise PayloadError(event.seq, event.type, f"{key}: omit the key instead of null")
    try:
        return model.model_validate(data, strict=True)
    except ValidationError as error:
        raise PayloadError(event.seq, event.type, describe(error, root="data")) from None


def _as_object(event: SessionEvent) -> dict[str, Any]:
    if not isinstance(event.data, dict):
        raise PayloadError(event.seq, event.type, "data: expected a JSON object")
    return event.data


def _optional_keys(model: type[BaseModel]) -> tuple[str, ...]:
    # `value` of a tool result is the exception: `null` is a real result there.
    return tuple(
        field.alias or name
        for name, field in model.model_fields.items()
        if not field.is_required() and field.default is None and name != "value"
    )


_OPTIONAL_KEYS: Mapping[type[BaseModel], tuple[str, ...]] = MappingProxyType(
    {model: _optional_keys(model) for model in HOST_EVENT_TYPES.values()}
)
