"""Protocol v1 (public): the `schedule/change` event and its strict decoder.

`data` is exactly one of::

    {"version": 1, "change": "create", "record": {"id", "kind": "after", "prompt",
                                                   "afterSeconds", "scheduledAt"}}
    {"version": 1, "change": "delete", "id"}
    {"version": 1, "change": "dispatch", "id"}

The decoder rejects, with a reason a person can act on: any other version
(including `true` and `1.0`, which compare equal to 1), an unknown change, an
extra or missing field, a wrong type (a boolean is not an integer), an empty or
untrimmed prompt, `afterSeconds` that is not an integer in 1..2^53-1, a
`scheduledAt` that is not a real UTC instant spelt `YYYY-MM-DDTHH:MM:SS.mmmZ`,
and an id that is not `rem-<n>`. Records are immutable.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    TypeAdapter,
    ValidationError,
)

from .ids import ReminderId, parse_reminder_id
from .timefmt import parse_timestamp

__all__ = [
    "EVENT_TYPE",
    "MAX_SAFE_INTEGER",
    "PROTOCOL_VERSION",
    "CreateChange",
    "DeleteChange",
    "DispatchChange",
    "ProtocolError",
    "ReminderRecord",
    "ScheduleChange",
    "create_data",
    "decode_change",
    "delete_data",
    "dispatch_data",
]

EVENT_TYPE = "schedule/change"
PROTOCOL_VERSION = 1
MAX_SAFE_INTEGER = 2**53 - 1


class ProtocolError(ValueError):
    """A `schedule/change` payload that protocol v1 does not allow. `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _exact_int(value: object) -> object:
    # Strict mode still lets `true` and `1.0` satisfy `Literal[1]` (they compare equal).
    if type(value) is not int:
        raise ValueError(f"expected the integer 1, got {type(value).__name__}")
    return value


def _reminder_id(value: ReminderId) -> ReminderId:
    return parse_reminder_id(value)[0]


def _trimmed(value: str) -> str:
    if value != value.strip():
        raise ValueError("the prompt must not start or end with whitespace")
    return value


def _timestamp(value: str) -> str:
    parse_timestamp(value)
    return value


_RECORD = ConfigDict(strict=True, extra="forbid", frozen=True, populate_by_name=False)

Version = Annotated[Literal[1], BeforeValidator(_exact_int)]
Id = Annotated[ReminderId, AfterValidator(_reminder_id)]
Prompt = Annotated[str, Field(min_length=1), AfterValidator(_trimmed)]
Seconds = Annotated[int, Field(gt=0, le=MAX_SAFE_INTEGER)]
Timestamp = Annotated[str, AfterValidator(_timestamp)]


class ReminderRecord(BaseModel):
    """One reminder as `create` stores it; `due_ms` is its target in epoch ms."""

    model_config = _RECORD

    id: Id
    kind: Literal["after"]
    prompt: Prompt
    after_seconds: Seconds = Field(alias="afterSeconds")
    scheduled_at: Timestamp = Field(alias="scheduledAt")

    @property
    def due_ms(self) -> int:
        return parse_timestamp(self.scheduled_at)

    def to_data(self) -> dict[str, JsonValue]:
        """The record's protocol JSON object."""
        return {
            "id": self.id,
            "kind": self.kind,
            "prompt": self.prompt,
            "afterSeconds": self.after_seconds,
            "scheduledAt": self.scheduled_at,
        }


class CreateChange(BaseModel):
    model_config = _RECORD

    version: Version
    change: Literal["create"]
    record: ReminderRecord


class DeleteChange(BaseModel):
    model_config = _RECORD

    version: Version
    change: Literal["delete"]
    id: Id


class DispatchChange(BaseModel):
    model_config = _RECORD

    version: Version
    change: Literal["dispatch"]
    id: Id


ScheduleChange = Annotated[
    CreateChange | DeleteChange | DispatchChange, Field(discriminator="change")
]
_CHANGE: TypeAdapter[CreateChange | DeleteChange | DispatchChange] = TypeAdapter(ScheduleChange)
_TAGS = ("create", "delete", "dispatch")


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_url=False):
        loc = item["loc"]
        # A tagged union prefixes each location with the tag it chose; the
        # change is already in the payload, so the field path alone reads better.
        if loc and loc[0] in _TAGS:
            loc = loc[1:]
        where = ".".join(str(part) for part in loc) or "data"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


def decode_change(data: JsonValue) -> CreateChange | DeleteChange | DispatchChange:
    """Decode one `schedule/change` payload; raise `ProtocolError` with the reason."""
    try:
        return _CHANGE.validate_python(data, strict=True)
    except ValidationError as error:
        raise ProtocolError(_describe(error)) from None


def create_data(record: ReminderRecord) -> dict[str, JsonValue]:
    return {"version": PROTOCOL_VERSION, "change": "create", "record": record.to_data()}


def delete_data(reminder_id: ReminderId) -> dict[str, JsonValue]:
    return {"version": PROTOCOL_VERSION, "change": "delete", "id": reminder_id}


def dispatch_data(reminder_id: ReminderId) -> dict[str, JsonValue]:
    return {"version": PROTOCOL_VERSION, "change": "dispatch", "id": reminder_id}
