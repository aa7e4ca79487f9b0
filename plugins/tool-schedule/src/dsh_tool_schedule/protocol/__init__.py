"""The `schedule/change` event (public): protocol v1 (read) and v2 (read and written).

`decode_change(data)` reads either version and raises `ProtocolError` with a
reason a person can act on: a version that is not the integer 1 or 2 (`true`
and `2.0` compare equal but are not), an unknown change, an extra or missing
field, a wrong type, or a value the version does not allow (`v1`, `v2`
modules). Everything written from now on is v2 (`create_data`, `update_data`,
`delete_data`, `dispatch_data`); v1 events stay valid forever and fold as
`after` reminders.
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue, TypeAdapter, ValidationError

from dsh import describe

from ..ids import ReminderId
from .fields import MAX_SAFE_INTEGER
from .v1 import V1Change, V1Create, V1Delete, V1Dispatch, V1Record
from .v2 import (
    AfterRule,
    AtRule,
    CronRule,
    EveryRule,
    Record,
    RuleModel,
    V2Change,
    V2Create,
    V2Delete,
    V2Dispatch,
    V2Update,
)

__all__ = [
    "EVENT_TYPE",
    "MAX_SAFE_INTEGER",
    "PROTOCOL_VERSION",
    "AfterRule",
    "AtRule",
    "Change",
    "CronRule",
    "EveryRule",
    "ProtocolError",
    "Record",
    "RuleModel",
    "V1Create",
    "V1Delete",
    "V1Dispatch",
    "V1Record",
    "V2Create",
    "V2Delete",
    "V2Dispatch",
    "V2Update",
    "create_data",
    "decode_change",
    "delete_data",
    "dispatch_data",
    "update_data",
]

EVENT_TYPE = "schedule/change"
PROTOCOL_VERSION = 2
"""The version every new `schedule/change` is written in."""

Change = V1Create | V1Delete | V1Dispatch | V2Create | V2Update | V2Delete | V2Dispatch

_V1: TypeAdapter[V1Create | V1Delete | V1Dispatch] = TypeAdapter(V1Change)
_V2: TypeAdapter[V2Create | V2Update | V2Delete | V2Dispatch] = TypeAdapter(V2Change)
_TAGS = ("create", "update", "delete", "dispatch")


class ProtocolError(ValueError):
    """A `schedule/change` payload that neither protocol version allows. `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def decode_change(data: JsonValue) -> Change:
    """Decode one `schedule/change` payload of either version; `ProtocolError` says why not."""
    adapter = _adapter(data)
    try:
        change: Change = adapter.validate_python(data, strict=True)
        return change
    except ValidationError as error:
        raise ProtocolError(describe(error, root="data", drop_tags=_TAGS)) from None


def _adapter(data: Any) -> TypeAdapter[Any]:
    if not isinstance(data, dict):
        raise ProtocolError(f"data: expected a JSON object, got {type(data).__name__}")
    version = data.get("version")
    if type(version) is int and version == 1:
        return _V1
    if type(version) is int and version == 2:
        return _V2
    if "version" not in data:
        raise ProtocolError("version: field required")
    raise ProtocolError(
        f"version: expected the integer 1 or 2, got {version!r} ({type(version).__name__})"
    )


def create_data(record: Record) -> dict[str, JsonValue]:
    return {"version": 2, "change": "create", "record": record.to_data()}


def update_data(record: Record) -> dict[str, JsonValue]:
    return {"version": 2, "change": "update", "record": record.to_data()}


def delete_data(reminder_id: ReminderId) -> dict[str, JsonValue]:
    return {"version": 2, "change": "delete", "id": reminder_id}


def dispatch_data(
    reminder_id: ReminderId, occurrence_at: str, missed: int, record_seq: int
) -> dict[str, JsonValue]:
    return {
        "version": 2,
        "change": "dispatch",
        "id": reminder_id,
        "occurrenceAt": occurrence_at,
        "missed": missed,
        "recordSeq": record_seq,
    }
