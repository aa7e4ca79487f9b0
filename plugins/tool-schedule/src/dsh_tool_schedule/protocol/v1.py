"""Protocol v1 (public, read forever, no longer written): `after` reminders.

`data` is exactly one of::

    {"version": 1, "change": "create", "record": {"id", "kind": "after", "prompt",
                                                   "afterSeconds", "scheduledAt"}}
    {"version": 1, "change": "delete", "id"}
    {"version": 1, "change": "dispatch", "id"}

The models reject an extra or missing field, a wrong type (a boolean is not an
integer), an empty or untrimmed prompt, `afterSeconds` outside 1..2^53-1, a
`scheduledAt` that is not a real UTC instant spelt `YYYY-MM-DDTHH:MM:SS.mmmZ`,
and an id that is not `rem-<n>`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field, JsonValue

from ..timefmt import parse_timestamp
from .fields import RECORD_CONFIG, Id, Prompt, Seconds, Timestamp, exact_version

__all__ = ["V1Change", "V1Create", "V1Delete", "V1Dispatch", "V1Record"]

Version = Annotated[Literal[1], BeforeValidator(exact_version)]


class V1Record(BaseModel):
    """One reminder as a v1 `create` stores it; `due_ms` is its target in epoch ms."""

    model_config = RECORD_CONFIG

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


class V1Create(BaseModel):
    model_config = RECORD_CONFIG

    version: Version
    change: Literal["create"]
    record: V1Record


class V1Delete(BaseModel):
    model_config = RECORD_CONFIG

    version: Version
    change: Literal["delete"]
    id: Id


class V1Dispatch(BaseModel):
    model_config = RECORD_CONFIG

    version: Version
    change: Literal["dispatch"]
    id: Id


V1Change = Annotated[V1Create | V1Delete | V1Dispatch, Field(discriminator="change")]
