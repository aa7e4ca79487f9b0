"""The model-facing tools: `schedule_create`, `schedule_update`, `schedule_list`, `schedule_delete`.

Each is a thin shell over one agent's `ScheduleLedger`. The tools check the
shape of their input before any barrier, so a malformed call changes nothing
and costs no flush:

- a rule is exactly one of `after_seconds`, `at`, `every_seconds` (alone or
  with `at`, its first occurrence) and `cron`, else `invalid_rule`; seconds
  are integers in 1..2^53-1 (not `true`, not `10.0`); `at`, `until`,
  `cron`, `time_zone` are strings; `count` an integer ≥ 1; `misfire`
  `"latest"` or `"skip"` — anything else is `invalid_rule` naming the field;
- `prompt` is a string that is not empty once trimmed and has at most
  `MAX_PROMPT_CHARS` characters (code points) once trimmed, else
  `invalid_prompt`; the trimmed prompt is what is stored;
- on `schedule_create` a `null` argument is the same as leaving it out; on
  `schedule_update`, `until: null` and `count: null` remove them.

Any other unknown argument fails the strict input model (`invalid_arguments`).
What the values mean (zones, DST, limits) is `drafts` and the ledger's.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import ConfigDict, Field, JsonValue
from pydantic.config import JsonDict

from dsh import Tool, ToolArguments, ToolContext, ToolError

from .drafts import MAX_COUNT, UNSET, CreateRequest, Misfire, RuleRequest, UpdateRequest
from .ledger import ScheduleLedger
from .protocol import MAX_SAFE_INTEGER

__all__ = [
    "MAX_PROMPT_CHARS",
    "RULE_FIELDS",
    "CreateArguments",
    "DeleteArguments",
    "ListArguments",
    "ScheduleCreate",
    "ScheduleDelete",
    "ScheduleList",
    "ScheduleUpdate",
    "UpdateArguments",
    "schedule_tools",
]

MAX_PROMPT_CHARS: Final = 4000
RULE_FIELDS: Final = ("after_seconds", "at", "every_seconds", "cron")

_TIME = "a time YYYY-MM-DDTHH:MM[:SS] in time_zone, or with Z or ±HH:MM (which then wins)"
_PROPERTIES: Final[dict[str, JsonValue]] = {
    "prompt": {
        "type": "string",
        "description": f"What to remind about (1-{MAX_PROMPT_CHARS} characters).",
    },
    "after_seconds": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_SAFE_INTEGER,
        "description": "Once, this many whole seconds from now.",
    },
    "at": {
        "type": "string",
        "description": f"Once, at {_TIME}. With every_seconds: the first occurrence.",
    },
    "every_seconds": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_SAFE_INTEGER,
        "description": "Repeatedly, every this many seconds of elapsed time; the first one "
        "interval from now (or at `at`).",
    },
    "cron": {
        "type": "string",
        "description": "Repeatedly, on a 5-field cron 'minute hour day-of-month month "
        "day-of-week' evaluated in time_zone, e.g. '0 9 * * MON-FRI' (no seconds field).",
    },
    "time_zone": {
        "type": "string",
        "description": "IANA zone such as Europe/Berlin; default: the zone the user's latest "
        "message came from, else UTC.",
    },
    "until": {
        "type": ["string", "null"],
        "description": f"Recurring only: no occurrence after {_TIME}.",
    },
    "count": {
        "type": ["integer", "null"],
        "minimum": 1,
        "maximum": MAX_COUNT,
        "description": "Recurring only: deliver this many occurrences in all, then stop.",
    },
    "misfire": {
        "type": "string",
        "enum": ["latest", "skip"],
        "description": "Recurring only, when the Session was not live for occurrences: "
        "'latest' (default) delivers the most recent one once, saying how many were missed; "
        "'skip' delivers none of them.",
    },
}


def _schema(*, update: bool) -> Any:
    def edit(schema: JsonDict) -> None:
        properties: dict[str, JsonValue] = dict(_PROPERTIES)
        if update:
            properties = {
                "id": {"type": "string", "description": "The reminder id, e.g. rem-1."},
                "revision": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "The revision you last saw (schedule_list); a newer one "
                    "answers schedule_conflict with the current reminder.",
                },
                **properties,
                "paused": {
                    "type": "boolean",
                    "description": "true pauses the reminder, false resumes it.",
                },
            }
            schema["required"] = ["id", "revision"]
        else:
            schema["required"] = ["prompt"]
        schema["properties"] = properties
        schema["additionalProperties"] = False

    return edit


class CreateArguments(ToolArguments):
    # Every field is JSON so that a wrong value gets this plugin's error code
    # (invalid_rule, invalid_prompt) rather than the generic invalid_arguments.
    model_config = ConfigDict(json_schema_extra=_schema(update=False))

    prompt: JsonValue = None
    after_seconds: JsonValue = None
    at: JsonValue = None
    every_seconds: JsonValue = None
    cron: JsonValue = None
    time_zone: JsonValue = None
    until: JsonValue = None
    count: JsonValue = None
    misfire: JsonValue = None


class UpdateArguments(CreateArguments):
    model_config = ConfigDict(json_schema_extra=_schema(update=True))

    id: str
    revision: JsonValue = None
    paused: JsonValue = None


class ListArguments(ToolArguments):
    pass


class DeleteArguments(ToolArguments):
    id: str = Field(description="The reminder id, e.g. rem-1.")


def _seconds(name: str, value: JsonValue) -> int:
    # Exactly int: bool is an int subclass, but `true` is not a number of seconds.
    if type(value) is int and 1 <= value <= MAX_SAFE_INTEGER:
        return value
    raise ToolError(
        "invalid_rule",
        f"{name} must be a whole number of seconds from 1 to {MAX_SAFE_INTEGER}, got {value!r}",
    )


def _text(name: str, value: JsonValue) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ToolError("invalid_rule", f"{name} must be a string, got {value!r}")


_RULES: Final = (["after_seconds"], ["at"], ["every_seconds"], ["at", "every_seconds"], ["cron"])


def _rule(args: CreateArguments, *, required: bool) -> RuleRequest | None:
    given = [name for name in RULE_FIELDS if getattr(args, name) is not None]
    if not given and not required:
        return None
    if given not in _RULES:
        raise ToolError(
            "invalid_rule",
            "give exactly one rule: after_seconds, at, every_seconds (optionally with at, "
            f"its first occurrence) or cron; got {', '.join(given) or 'none'}",
        )
    after, every = args.after_seconds, args.every_seconds
    return RuleRequest(
        after_seconds=None if after is None else _seconds("after_seconds", after),
        at=_text("at", args.at),
        every_seconds=None if every is None else _seconds("every_seconds", every),
        cron=_text("cron", args.cron),
    )


def _prompt(value: JsonValue) -> str:
    if not isinstance(value, str):
        raise ToolError("invalid_prompt", "prompt must be a string")
    prompt = value.strip()
    if not prompt:
        raise ToolError("invalid_prompt", "prompt is empty")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise ToolError(
            "invalid_prompt",
            f"prompt has {len(prompt)} characters; at most {MAX_PROMPT_CHARS} are allowed",
        )
    return prompt


def _count(value: JsonValue) -> int | None:
    if value is None or (type(value) is int and 1 <= value <= MAX_COUNT):
        return value
    raise ToolError(
        "invalid_rule", f"count must be a whole number from 1 to {MAX_COUNT}, got {value!r}"
    )


def _misfire(value: JsonValue) -> Misfire | None:
    if value is None:
        return None
    if value == "latest":
        return "latest"
    if value == "skip":
        return "skip"
    raise ToolError("invalid_rule", f"misfire must be 'latest' or 'skip', got {value!r}")


def create_request(args: CreateArguments) -> CreateRequest:
    """The shape-checked request of a `schedule_create` call."""
    rule = _rule(args, required=True)
    assert rule is not None
    return CreateRequest(
        prompt=_prompt(args.prompt),
        rule=rule,
        time_zone=_text("time_zone", args.time_zone),
        until=_text("until", args.until),
        count=_count(args.count),
        misfire=_misfire(args.misfire),
    )


def update_request(args: UpdateArguments) -> tuple[int, UpdateRequest]:
    """The revision and the shape-checked request of a `schedule_update` call."""
    if type(args.revision) is not int or args.revision < 1:
        raise ToolError(
            "invalid_arguments",
            f"revision must be the reminder's current revision (an integer ≥ 1), got "
            f"{args.revision!r}; schedule_list shows it",
        )
    given = args.model_fields_set - {"id", "revision"}
    if not given:
        raise ToolError("invalid_arguments", "schedule_update needs at least one field to change")
    if args.paused is not None and type(args.paused) is not bool:
        raise ToolError("invalid_arguments", f"paused must be true or false, got {args.paused!r}")
    request = UpdateRequest(
        prompt=None if args.prompt is None else _prompt(args.prompt),
        rule=_rule(args, required=False),
        time_zone=_text("time_zone", args.time_zone),
        until=_text("until", args.until) if "until" in given else UNSET,
        count=_count(args.count) if "count" in given else UNSET,
        misfire=_misfire(args.misfire),
        paused=args.paused,
    )
    return args.revision, request


class ScheduleCreate(Tool[CreateArguments]):
    name = "schedule_create"
    description = (
        "Set a durable reminder in this Session: at the time the rule says, this conversation "
        "receives a message with `prompt`. Give exactly one rule: after_seconds (once, from "
        "now), at (once, a local time), every_seconds (repeatedly) or cron (repeatedly, "
        "'m h dom mon dow'). Times and cron are read in time_zone (default: the user's zone). "
        "The reminder belongs to this Session. The answer's firesWhenClosed says whether this "
        "host also fires it while the conversation is closed (true) or only while it is open "
        "(false; an occurrence missed meanwhile fires when it is opened again: misfire): tell "
        "the person which. The answer names the zone and the UTC time (nextAt)."
    )
    arguments = CreateArguments

    __slots__ = ("_ledger",)  # installed in every root agent

    def __init__(self, ledger: ScheduleLedger) -> None:
        self._ledger = ledger

    async def run(self, args: CreateArguments, ctx: ToolContext) -> JsonValue:
        return await self._ledger.create(create_request(args))


class ScheduleUpdate(Tool[UpdateArguments]):
    name = "schedule_update"
    description = (
        "Change an active reminder of this Session: its prompt, its rule (any rule argument "
        "replaces the rule), time_zone, until, count, misfire, or paused (true pauses, false "
        "resumes). Pass the revision you last saw: if the reminder changed since, nothing is "
        "changed and schedule_conflict shows the current reminder."
    )
    arguments = UpdateArguments

    __slots__ = ("_ledger",)  # installed in every root agent

    def __init__(self, ledger: ScheduleLedger) -> None:
        self._ledger = ledger

    async def run(self, args: UpdateArguments, ctx: ToolContext) -> JsonValue:
        revision, request = update_request(args)
        return await self._ledger.update(args.id, revision, request)


class ScheduleList(Tool[ListArguments]):
    name = "schedule_list"
    description = (
        "List this Session's active reminders in creation order (each with its rule, zone, "
        "next time in UTC and local time, state scheduled/overdue/paused and revision), and "
        "the user's zone and the time now."
    )
    arguments = ListArguments

    __slots__ = ("_ledger",)  # installed in every root agent

    def __init__(self, ledger: ScheduleLedger) -> None:
        self._ledger = ledger

    async def run(self, args: ListArguments, ctx: ToolContext) -> JsonValue:
        return await self._ledger.list_active()


class ScheduleDelete(Tool[DeleteArguments]):
    name = "schedule_delete"
    description = (
        "Cancel an active reminder of this Session by id (a recurring one stops for good). "
        'An unknown or finished id answers deleted: false with code "schedule_not_found".'
    )
    arguments = DeleteArguments

    __slots__ = ("_ledger",)  # installed in every root agent

    def __init__(self, ledger: ScheduleLedger) -> None:
        self._ledger = ledger

    async def run(self, args: DeleteArguments, ctx: ToolContext) -> JsonValue:
        return await self._ledger.delete(args.id)


def schedule_tools(ledger: ScheduleLedger) -> tuple[Tool[Any], ...]:
    """The four tools, bound to `ledger`, in registration order."""
    return (
        ScheduleCreate(ledger),
        ScheduleUpdate(ledger),
        ScheduleList(ledger),
        ScheduleDelete(ledger),
    )
