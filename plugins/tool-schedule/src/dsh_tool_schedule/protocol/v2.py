"""Protocol v2 (public): absolute times, zones, recurrence, updates (DESIGN §8b).

`data` is exactly one of::

    {"version": 2, "change": "create",   "record": <record, revision 1>}
    {"version": 2, "change": "update",   "record": <the whole new record>}
    {"version": 2, "change": "delete",   "id"}
    {"version": 2, "change": "dispatch", "id", "occurrenceAt", "missed", "recordSeq"}

A record::

    {"id": "rem-1", "prompt": "stretch",
     "rule": {"kind": "after", "seconds": 600}
           | {"kind": "at", "at": "2026-01-02T09:00"}
           | {"kind": "every", "seconds": 7200, "at"?: "2026-01-02T09:00"}
           | {"kind": "cron", "cron": "0 9 * * 1-5"},
     "timeZone": "Europe/Berlin",
     "firstAt": "2026-01-02T08:00:00.000Z", "nextAt": "2026-01-02T08:00:00.000Z",
     "until"?: "…Z", "count"?: 3, "misfire": "latest" | "skip",
     "paused": false, "revision": 1}

`rule` echoes the arguments it was made from (`at` as the person wrote it);
everything the fold needs is resolved when the record is written, so no
reader ever re-reads a wall time: `firstAt` is the rule's first occurrence
(the anchor of an `every` series), `nextAt` the occurrence this record
delivers next (a snooze or a resume moves it), `until` the resolved end.
Only a `cron` rule is evaluated by readers, in `timeZone`, with their zone
database. `until` and `count` exist only on recurring rules; optional keys
are absent rather than `null`. Times are UTC `YYYY-MM-DDTHH:MM:SS.mmmZ`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    JsonValue,
    model_validator,
)

from dsh import validate_time_zone

from ..cron import normalize_cron
from ..timefmt import parse_timestamp
from .fields import (
    MAX_SAFE_INTEGER,
    RECORD_CONFIG,
    Id,
    Prompt,
    Seconds,
    Timestamp,
    exact_version,
    reject_nulls,
)

__all__ = [
    "WALL_TIME_PATTERN",
    "AfterRule",
    "AtRule",
    "CronRule",
    "EveryRule",
    "Record",
    "Rule",
    "V2Change",
    "V2Create",
    "V2Delete",
    "V2Dispatch",
    "V2Update",
]

Version = Annotated[Literal[2], BeforeValidator(exact_version)]
Count = Annotated[int, Field(ge=1, le=MAX_SAFE_INTEGER)]
Seq = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
Missed = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]

WALL_TIME_PATTERN = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2})?(Z|[+-][0-9]{2}:[0-9]{2})?"
)


def _wall_time(value: str) -> str:
    if WALL_TIME_PATTERN.fullmatch(value) is None:
        raise ValueError(f"{value!r} is not a time like 2026-01-02T09:00[:00][Z|±HH:MM]")
    return value


def _cron(value: str) -> str:
    if normalize_cron(value) != value:
        raise ValueError(f"{value!r} is not written with single spaces between its fields")
    return value


WallTime = Annotated[str, AfterValidator(_wall_time)]
ZoneName = Annotated[str, AfterValidator(validate_time_zone)]
CronText = Annotated[str, AfterValidator(_cron)]


class AfterRule(BaseModel):
    """Once, `seconds` after the record was written."""

    model_config = RECORD_CONFIG

    kind: Literal["after"]
    seconds: Seconds

    def to_data(self) -> dict[str, JsonValue]:
        return {"kind": self.kind, "seconds": self.seconds}


class AtRule(BaseModel):
    """Once, at a wall time in the record's zone (or with its own offset)."""

    model_config = RECORD_CONFIG

    kind: Literal["at"]
    at: WallTime

    def to_data(self) -> dict[str, JsonValue]:
        return {"kind": self.kind, "at": self.at}


class EveryRule(BaseModel):
    """Every `seconds` of elapsed time from `firstAt` (`at`, when given, named it)."""

    model_config = RECORD_CONFIG

    kind: Literal["every"]
    seconds: Seconds
    at: WallTime | None = None

    @model_validator(mode="before")
    @classmethod
    def _absent_not_null(cls, data: Any) -> Any:
        return reject_nulls(data, ("at",))

    def to_data(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = {"kind": self.kind, "seconds": self.seconds}
        if self.at is not None:
            data["at"] = self.at
        return data


class CronRule(BaseModel):
    """Every wall time matching a 5-field cron expression in the record's zone."""

    model_config = RECORD_CONFIG

    kind: Literal["cron"]
    cron: CronText

    def to_data(self) -> dict[str, JsonValue]:
        return {"kind": self.kind, "cron": self.cron}


Rule = Annotated[AfterRule | AtRule | EveryRule | CronRule, Field(discriminator="kind")]
RuleModel = AfterRule | AtRule | EveryRule | CronRule


class Record(BaseModel):
    """One reminder as a `create` or `update` stores it (module docstring)."""

    model_config = RECORD_CONFIG

    id: Id
    prompt: Prompt
    rule: Rule
    time_zone: ZoneName = Field(alias="timeZone")
    first_at: Timestamp = Field(alias="firstAt")
    next_at: Timestamp = Field(alias="nextAt")
    until: Timestamp | None = None
    count: Count | None = None
    misfire: Literal["latest", "skip"]
    paused: bool
    revision: Count

    @model_validator(mode="before")
    @classmethod
    def _absent_not_null(cls, data: Any) -> Any:
        return reject_nulls(data, ("until", "count"))

    @model_validator(mode="after")
    def _ends_only_recurring(self) -> Self:
        if not self.recurring and (self.until is not None or self.count is not None):
            raise ValueError(f"a one-shot {self.rule.kind!r} rule has no until or count")
        return self

    @property
    def recurring(self) -> bool:
        return isinstance(self.rule, EveryRule | CronRule)

    @property
    def next_ms(self) -> int:
        return parse_timestamp(self.next_at)

    @property
    def first_ms(self) -> int:
        return parse_timestamp(self.first_at)

    @property
    def until_ms(self) -> int | None:
        return None if self.until is None else parse_timestamp(self.until)

    def to_data(self) -> dict[str, JsonValue]:
        """The record's protocol JSON object (optional keys only when set)."""
        data: dict[str, JsonValue] = {
            "id": self.id,
            "prompt": self.prompt,
            "rule": self.rule.to_data(),
            "timeZone": self.time_zone,
            "firstAt": self.first_at,
            "nextAt": self.next_at,
        }
        if self.until is not None:
            data["until"] = self.until
        if self.count is not None:
            data["count"] = self.count
        data.update({"misfire": self.misfire, "paused": self.paused, "revision": self.revision})
        return data


class V2Create(BaseModel):
    model_config = RECORD_CONFIG

    version: Version
    change: Literal["create"]
    record: Record

    @model_validator(mode="after")
    def _first_revision(self) -> Self:
        if self.record.revision != 1:
            raise ValueError(f"a create has revision 1, not {self.record.revision}")
        return self


class V2Update(BaseModel):
    model_config = RECORD_CONFIG

    version: Version
    change: Literal["update"]
    record: Record


class V2Delete(BaseModel):
    model_config = RECORD_CONFIG

    version: Version
    change: Literal["delete"]
    id: Id


class V2Dispatch(BaseModel):
    """One delivered occurrence, standing for itself and `missed` earlier ones."""

    model_config = RECORD_CONFIG

    version: Version
    change: Literal["dispatch"]
    id: Id
    occurrence_at: Timestamp = Field(alias="occurrenceAt")
    missed: Missed
    record_seq: Seq = Field(alias="recordSeq")

    @property
    def occurrence_ms(self) -> int:
        return parse_timestamp(self.occurrence_at)


V2Change = Annotated[V2Create | V2Update | V2Delete | V2Dispatch, Field(discriminator="change")]
