"""The three model-facing tools: `schedule_create`, `schedule_list`, `schedule_delete`.

Each is a thin shell over one agent's `ScheduleLedger`. `schedule_create`
checks the shape of its input before any barrier:

- `at`, `every_seconds`, `cron` and `time_zone` are accepted by the input model
  only so that they can be rejected with `invalid_rule` rather than ignored
  (present with any value, even null);
- `after_seconds` must be an integer (not a boolean, not `10.0`) in 1..2^53-1,
  else `invalid_rule`;
- `prompt` must be a string that is not empty once trimmed and at most
  `MAX_PROMPT_CHARS` characters (code points) once trimmed, else
  `invalid_prompt`; the trimmed prompt is what is stored.

Any other unknown argument fails the strict input model (`invalid_arguments`).
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import ConfigDict, Field, JsonValue
from pydantic.config import JsonDict

from dsh import Tool, ToolArguments, ToolContext, ToolError

from .ledger import ScheduleLedger
from .protocol import MAX_SAFE_INTEGER

__all__ = [
    "MAX_PROMPT_CHARS",
    "UNSUPPORTED_RULES",
    "CreateArguments",
    "DeleteArguments",
    "ListArguments",
    "ScheduleCreate",
    "ScheduleDelete",
    "ScheduleList",
    "schedule_tools",
]

MAX_PROMPT_CHARS: Final = 4000
UNSUPPORTED_RULES: Final = ("at", "every_seconds", "cron", "time_zone")


def _create_schema(schema: JsonDict) -> None:
    # The model accepts the unsupported rule keys only to reject them; the schema
    # the model reads advertises just what works.
    schema["properties"] = {
        "prompt": {
            "type": "string",
            "description": f"What to remind about (1-{MAX_PROMPT_CHARS} characters).",
        },
        "after_seconds": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_SAFE_INTEGER,
            "description": "How many whole seconds from now the reminder is due.",
        },
    }
    schema["required"] = ["prompt", "after_seconds"]
    schema["additionalProperties"] = False


class CreateArguments(ToolArguments):
    model_config = ConfigDict(json_schema_extra=_create_schema)

    prompt: JsonValue = None
    after_seconds: JsonValue = None
    at: JsonValue = None
    every_seconds: JsonValue = None
    cron: JsonValue = None
    time_zone: JsonValue = None


class ListArguments(ToolArguments):
    pass


class DeleteArguments(ToolArguments):
    id: str = Field(description="The reminder id, e.g. rem-1.")


def _after_seconds(args: CreateArguments) -> int:
    given = [name for name in UNSUPPORTED_RULES if name in args.model_fields_set]
    if given:
        raise ToolError(
            "invalid_rule",
            f"{', '.join(given)}: not supported; the only rule is after_seconds "
            "(a delay in whole seconds from now)",
        )
    seconds = args.after_seconds
    # Exactly int: bool is an int subclass, but `true` is not a number of seconds.
    if type(seconds) is int and 1 <= seconds <= MAX_SAFE_INTEGER:
        return seconds
    raise ToolError(
        "invalid_rule",
        f"after_seconds must be a whole number of seconds from 1 to {MAX_SAFE_INTEGER}, "
        f"got {seconds!r}",
    )


def _prompt(args: CreateArguments) -> str:
    if not isinstance(args.prompt, str):
        raise ToolError("invalid_prompt", "prompt must be a string")
    prompt = args.prompt.strip()
    if not prompt:
        raise ToolError("invalid_prompt", "prompt is empty")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise ToolError(
            "invalid_prompt",
            f"prompt has {len(prompt)} characters; at most {MAX_PROMPT_CHARS} are allowed",
        )
    return prompt


class ScheduleCreate(Tool[CreateArguments]):
    name = "schedule_create"
    description = (
        "Set a durable reminder in this Session: after `after_seconds` seconds, this "
        "conversation receives a message with `prompt`. Delivery is session-local: it fires "
        "only while this Session is live, and an overdue reminder fires when the Session is "
        "opened again. Only a relative delay is supported; at, every_seconds, cron and "
        "time_zone are rejected with invalid_rule."
    )
    arguments = CreateArguments

    def __init__(self, ledger: ScheduleLedger) -> None:
        self._ledger = ledger

    async def run(self, args: CreateArguments, ctx: ToolContext) -> JsonValue:
        after_seconds = _after_seconds(args)
        prompt = _prompt(args)
        return await self._ledger.create(prompt, after_seconds)


class ScheduleList(Tool[ListArguments]):
    name = "schedule_list"
    description = (
        "List this Session's active reminders in creation order, each with its state "
        "(scheduled or overdue) and deliveryMode session-local."
    )
    arguments = ListArguments

    def __init__(self, ledger: ScheduleLedger) -> None:
        self._ledger = ledger

    async def run(self, args: ListArguments, ctx: ToolContext) -> JsonValue:
        return await self._ledger.list_active()


class ScheduleDelete(Tool[DeleteArguments]):
    name = "schedule_delete"
    description = (
        "Cancel an active reminder of this Session by id. An unknown or already delivered "
        'id answers deleted: false with code "schedule_not_found".'
    )
    arguments = DeleteArguments

    def __init__(self, ledger: ScheduleLedger) -> None:
        self._ledger = ledger

    async def run(self, args: DeleteArguments, ctx: ToolContext) -> JsonValue:
        return await self._ledger.delete(args.id)


def schedule_tools(ledger: ScheduleLedger) -> tuple[Tool[Any], ...]:
    """The three tools, bound to `ledger`, in registration order."""
    return (ScheduleCreate(ledger), ScheduleList(ledger), ScheduleDelete(ledger))
