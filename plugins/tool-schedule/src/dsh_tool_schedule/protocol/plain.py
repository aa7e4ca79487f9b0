"""A plain check of `schedule/change` payloads: what the fold reads, without a model.

`plain_change(data, crons)` answers a `PlainChange` for a payload that both
protocol versions' models (`v1`, `v2`) certainly accept, and None for
anything else — then the caller decodes with the models, which either accept
it too (this check is only ever stricter: a `str` or `int` subclass, a key
order it does not expect are "not sure") or raise `ProtocolError` with the
models' own message. So every strictness rule and every error message stays
the models'; this only makes the common case cheap (no model, no pydantic
call: a few type checks, the id pattern, the timestamp arithmetic).

What it answers:

- a create or update: `PlainRecord` — the record's protocol JSON (exactly what
  `Record.to_data()` gives for the decoded record; a v1 create reads as the v2
  record `record_of_v1` makes) and the fields the fold decides from;
- a delete: `PlainDelete`; a dispatch: `PlainDispatch` (v2 with its
  occurrence and `recordSeq`, v1 without).

`crons` is the caller's `CronCache`: a cron text is read as valid when it
parses and is written normally, and each distinct text is parsed once
(a parse costs ≈ 15–20 µs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from dsh import validate_time_zone

from ..ids import MAX_REMINDER_NUMBER, REMINDER_ID_PATTERN, ReminderId
from ..timefmt import parse_timestamp
from .fields import MAX_SAFE_INTEGER
from .v2 import WALL_TIME_PATTERN

if TYPE_CHECKING:
    from ..cron_cache import CronCache

__all__ = ["PlainChange", "PlainDelete", "PlainDispatch", "PlainRecord", "plain_change"]


@dataclass(frozen=True, slots=True)
class PlainRecord:
    """A create or update; `data` is the record's protocol JSON (see the module docstring)."""

    change: str
    """`create` or `update`."""
    id: ReminderId
    number: int
    data: dict[str, Any]
    kind: str
    next_ms: int
    first_ms: int
    until_ms: int | None
    count: int | None
    paused: bool
    revision: int
    v1: bool = False

    @property
    def recurring(self) -> bool:
        return self.kind in ("every", "cron")


@dataclass(frozen=True, slots=True)
class PlainDelete:
    id: ReminderId
    change: str = "delete"


@dataclass(frozen=True, slots=True)
class PlainDispatch:
    """A dispatch; `occurrence_ms`, `record_seq` and `missed` are None for a v1 one."""

    id: ReminderId
    occurrence_at: str | None = None
    occurrence_ms: int | None = None
    record_seq: int | None = None
    missed: int | None = None
    change: str = "dispatch"


PlainChange = PlainRecord | PlainDelete | PlainDispatch

_V1_CREATE: Final = frozenset({"version", "change", "record"})
_V1_RECORD: Final = frozenset({"id", "kind", "prompt", "afterSeconds", "scheduledAt"})
_ID_ONLY: Final = frozenset({"version", "change", "id"})
_V2_DISPATCH: Final = frozenset({"version", "change", "id", "occurrenceAt", "missed", "recordSeq"})
_RECORD_REQUIRED: Final = frozenset(
    {"id", "prompt", "rule", "timeZone", "firstAt", "nextAt", "misfire", "paused", "revision"}
)
_RECORD_ALLOWED: Final = _RECORD_REQUIRED | {"until", "count"}
_RULE_KEYS: Final = {
    "after": (frozenset({"kind", "seconds"}), frozenset({"kind", "seconds"})),
    "at": (frozenset({"kind", "at"}), frozenset({"kind", "at"})),
    "every": (frozenset({"kind", "seconds"}), frozenset({"kind", "seconds", "at"})),
    "cron": (frozenset({"kind", "cron"}), frozenset({"kind", "cron"})),
}


def plain_change(data: object, crons: CronCache) -> PlainChange | None:
    """The payload as the fold reads it, or None when the models must decide (module doc)."""
    if type(data) is not dict:
        return None
    version = data.get("version")
    change = data.get("change")
    if type(version) is not int or type(change) is not str:
        return None
    try:
        if version == 2:
            return _v2(data, change, crons)
        if version == 1:
            return _v1(data, change)
    except ValueError:  # a timestamp, an id or a zone the models will name
        return None
    return None


def _id(value: object) -> tuple[ReminderId, int] | None:
    if type(value) is not str:
        return None
    match = REMINDER_ID_PATTERN.fullmatch(value)
    if match is None:
        return None
    number = int(match.group(1))
    return (ReminderId(value), number) if number <= MAX_REMINDER_NUMBER else None


def _count(value: object, low: int) -> bool:
    return type(value) is int and low <= value <= MAX_SAFE_INTEGER


def _prompt(value: object) -> bool:
    return type(value) is str and value != "" and value == value.strip()


def _v1(data: dict[str, Any], change: str) -> PlainChange | None:
    if change in ("delete", "dispatch"):
        named = _id(data.get("id")) if data.keys() == _ID_ONLY else None
        if named is None:
            return None
        return PlainDelete(named[0]) if change == "delete" else PlainDispatch(named[0])
    if change != "create" or data.keys() != _V1_CREATE:
        return None
    record = data["record"]
    if type(record) is not dict or record.keys() != _V1_RECORD:
        return None
    named = _id(record["id"])
    seconds = record["afterSeconds"]
    at = record["scheduledAt"]
    if (
        named is None
        or record["kind"] != "after"
        or type(record["kind"]) is not str
        or not _prompt(record["prompt"])
        or not _count(seconds, 1)
        or type(at) is not str
    ):
        return None
    due = parse_timestamp(at)
    v2 = {
        "id": named[0],
        "prompt": record["prompt"],
        "rule": {"kind": "after", "seconds": seconds},
        "timeZone": "UTC",
        "firstAt": at,
        "nextAt": at,
        "misfire": "latest",
        "paused": False,
        "revision": 1,
    }
    return PlainRecord(
        "create", named[0], named[1], v2, "after", due, due, None, None, False, 1, v1=True
    )


def _v2(data: dict[str, Any], change: str, crons: CronCache) -> PlainChange | None:
    if change == "dispatch":
        if data.keys() != _V2_DISPATCH:
            return None
        named = _id(data["id"])
        at = data["occurrenceAt"]
        record_seq = data["recordSeq"]
        if named is None or type(at) is not str or not _count(data["missed"], 0):
            return None
        if not _count(record_seq, 0):
            return None
        return PlainDispatch(named[0], at, parse_timestamp(at), record_seq, data["missed"])
    if change == "delete":
        named = _id(data.get("id")) if data.keys() == _ID_ONLY else None
        return None if named is None else PlainDelete(named[0])
    if change not in ("create", "update") or data.keys() != _V1_CREATE:
        return None
    record = _record(data["record"], change, crons)
    if record is None or (change == "create" and record.revision != 1):
        return None
    return record


def _record(record: object, change: str, crons: CronCache) -> PlainRecord | None:
    if type(record) is not dict:
        return None
    keys = record.keys()
    if not keys >= _RECORD_REQUIRED or not keys <= _RECORD_ALLOWED:
        return None
    named = _id(record["id"])
    kind = _rule(record["rule"], crons)
    zone, misfire, paused, revision = (
        record["timeZone"],
        record["misfire"],
        record["paused"],
        record["revision"],
    )
    first, following = record["firstAt"], record["nextAt"]
    if (
        named is None
        or kind is None
        or not _prompt(record["prompt"])
        or type(zone) is not str
        or type(misfire) is not str
        or misfire not in ("latest", "skip")
        or type(paused) is not bool
        or not _count(revision, 1)
        or type(first) is not str
        or type(following) is not str
    ):
        return None
    until, count = record.get("until"), record.get("count")
    if (until is not None or count is not None) and kind not in ("every", "cron"):
        return None
    if ("until" in keys and type(until) is not str) or ("count" in keys and not _count(count, 1)):
        return None
    validate_time_zone(zone)
    first_ms = parse_timestamp(first)
    next_ms = first_ms if following == first else parse_timestamp(following)
    until_ms = None if until is None else parse_timestamp(until)
    return PlainRecord(
        change,
        named[0],
        named[1],
        record,
        kind,
        next_ms,
        first_ms,
        until_ms,
        count,
        paused,
        revision,
    )


def _rule(rule: object, crons: CronCache) -> str | None:
    if type(rule) is not dict:
        return None
    kind = rule.get("kind")
    if type(kind) is not str or kind not in _RULE_KEYS:
        return None
    required, allowed = _RULE_KEYS[kind]
    keys = rule.keys()
    if not required <= keys or not keys <= allowed:
        return None
    if kind in ("after", "every") and not _count(rule["seconds"], 1):
        return None
    if "at" in keys and (
        type(rule["at"]) is not str or WALL_TIME_PATTERN.fullmatch(rule["at"]) is None
    ):
        return None
    if kind == "cron":
        text = rule["cron"]
        # A CronError (a ValueError) also says "not sure".
        if type(text) is not str or crons.parse(text).text != text:
            return None
    return kind
