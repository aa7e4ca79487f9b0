"""Field types shared by both protocol versions: ids, prompts, seconds, UTC timestamps."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field

from ..ids import ReminderId, parse_reminder_id
from ..timefmt import parse_timestamp

__all__ = [
    "MAX_SAFE_INTEGER",
    "RECORD_CONFIG",
    "Id",
    "Prompt",
    "Seconds",
    "Timestamp",
    "exact_version",
    "reject_nulls",
]

MAX_SAFE_INTEGER = 2**53 - 1

RECORD_CONFIG = ConfigDict(strict=True, extra="forbid", frozen=True, populate_by_name=False)


def exact_version(value: object) -> object:
    """Strict mode still lets `true` and `1.0` satisfy `Literal[1]`: demand a real int."""
    if type(value) is not int:
        raise ValueError(f"expected an integer version, got {type(value).__name__}")
    return value


def reject_nulls(data: Any, keys: tuple[str, ...]) -> Any:
    """Refuse `null` for the optional `keys` of a record: absent means absent.

    An optional key written as `null` would be dropped when the record is
    written again, so it could not round-trip to the same bytes. Use it in a
    `model_validator(mode="before")`.
    """
    if isinstance(data, dict):
        for key in keys:
            if key in data and data[key] is None:
                raise ValueError(f"{key}: omit the key instead of writing null")
    return data


def _reminder_id(value: ReminderId) -> ReminderId:
    return parse_reminder_id(value)[0]


def _trimmed(value: str) -> str:
    if value != value.strip():
        raise ValueError("the prompt must not start or end with whitespace")
    return value


def _timestamp(value: str) -> str:
    parse_timestamp(value)
    return value


Id = Annotated[ReminderId, AfterValidator(_reminder_id)]
Prompt = Annotated[str, Field(min_length=1), AfterValidator(_trimmed)]
Seconds = Annotated[int, Field(gt=0, le=MAX_SAFE_INTEGER)]
Timestamp = Annotated[str, AfterValidator(_timestamp)]
