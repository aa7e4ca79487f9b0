"""What a person can do to a reminder from the UI: the plugin's `dsh_session_action`s.

`POST /api/sessions/{id}/actions` with `{"plugin": "tool-schedule", "action", "args"}`:

| action | args | result |
| --- | --- | --- |
| `create` | `schedule_create`'s: `{"prompt", <a rule>, "time_zone"?, …}` | `{"reminder": view}` |
| `delete` | `{"id", "revision"?}` | `{"id", "deleted": true}` |
| `pause` | `{"id", "revision"?}` | `{"reminder": view}` |
| `resume` | `{"id", "revision"?}` | `{"reminder": view}` |
| `snooze` | `{"id", "seconds", "revision"?}` | `{"reminder": view}` |
| `snooze` | `{"dispatchSeq", "seconds"}` | `{"reminder": view, "snoozedFrom"}` |

`create` takes exactly the arguments of the `schedule_create` tool
(`tools.CreateArguments`, checked the same way: one rule of `after_seconds`,
`at`, `every_seconds` (with `at`, its first occurrence) or `cron`; a zone
defaults to the zone of the person's latest message, else UTC); its view
also says `firesWhenClosed`. It is what `dsh reminders add` sends.

`revision`, when given, makes the action a compare-and-set like
`schedule_update`: it applies only to that revision of the reminder. `snooze`
postpones the occurrence the view shows next by `seconds` (from now, when it
is already due): a one-shot is moved, a recurring reminder's next occurrence
is moved and the rule goes on after it (`drafts.draft_snooze`). Given
`dispatchSeq` instead of `id`, it snoozes an occurrence that was already
delivered (the card's "Snooze 10 min"): a new one-shot reminder with the same
prompt, due `seconds` from now, linked to that occurrence
(`ScheduleLedger.snooze_delivered`, `snoozes`); `snoozedFrom` is
`{"id", "dispatchSeq", "occurrenceAt"}` of the occurrence.

Each action runs through the agent's `ScheduleLedger`, exactly like the
tools: under the ledger lock, after a preflight barrier, and it answers only
after the barrier that follows its append — so a 200 means the change is
durable, and the owner recomputes at once. Refusals are `dsh.ActionError`s:

- 404 `unknown_action` (from the host) for another action name, and
  `schedule_not_installed` when the Session's agent has no reminders (a
  delegated child, or an agent that was live before the plugin loaded);
- 422 `invalid_arguments` for args of the wrong shape (`ActionArguments`),
  `invalid_rule` for a snooze past the reminder's `until` or the year 9999
  or a `create` whose rule is not one (`invalid_prompt`: its prompt);
- 409 when the reminders changed under the person: `schedule_not_found`
  (deleted, finished or never there), `schedule_conflict` (another revision),
  `schedule_paused` / `schedule_not_paused` (already as asked; a paused
  reminder is resumed, not snoozed), `schedule_log_invalid`,
  `limit_exceeded` (a `create`, or a snooze of a delivered reminder, when
  the Session already has `max_active` reminders, or a creation rate limit);
- 503 `persistence_uncertain` / `persistence_unavailable` when the store did
  not confirm (the message says whether something was appended).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Final

from pydantic import AfterValidator, Field, JsonValue

from dsh import ActionArguments, ActionError, JsonLike, ToolError

from .ids import parse_reminder_id
from .ledger import ScheduleLedger
from .protocol import MAX_SAFE_INTEGER
from .tools import CreateArguments, create_request

__all__ = [
    "ACTIONS",
    "CreateActionArguments",
    "ReminderArguments",
    "SnoozeArguments",
    "SnoozeDeliveredArguments",
    "start_action",
]

ACTIONS: Final = ("create", "delete", "pause", "resume", "snooze")

# A refusal's HTTP status by its code; anything else (internal_error) is 500.
_STATUS: Final = {
    "invalid_rule": 422,
    "invalid_prompt": 422,
    "limit_exceeded": 409,
    "schedule_not_found": 409,
    "schedule_conflict": 409,
    "schedule_paused": 409,
    "schedule_not_paused": 409,
    "schedule_log_invalid": 409,
    "persistence_uncertain": 503,
    "persistence_unavailable": 503,
}


def _reminder_id(value: str) -> str:
    return parse_reminder_id(value)[0]


class ReminderArguments(ActionArguments):
    """`{"id", "revision"?}`: which reminder, and optionally which revision of it."""

    id: Annotated[str, AfterValidator(_reminder_id)]
    revision: int | None = Field(default=None, ge=1, le=MAX_SAFE_INTEGER)


class SnoozeArguments(ReminderArguments):
    """`{"id", "seconds", "revision"?}`."""

    seconds: int = Field(ge=1, le=MAX_SAFE_INTEGER)


class SnoozeDeliveredArguments(ActionArguments):
    """`{"dispatchSeq", "seconds"}`: the seq of the dispatch that delivered the occurrence."""

    dispatch_seq: int = Field(alias="dispatchSeq", ge=0, le=MAX_SAFE_INTEGER)
    seconds: int = Field(ge=1, le=MAX_SAFE_INTEGER)


class CreateActionArguments(ActionArguments, CreateArguments):
    """`schedule_create`'s arguments (`tools.CreateArguments`), parsed as an action's."""


Run = Callable[[ScheduleLedger], Awaitable[JsonLike]]


def start_action(
    name: str, args: dict[str, JsonValue], ledger: ScheduleLedger | None, session_id: str
) -> Awaitable[JsonLike] | None:
    """The awaitable result of action `name`, or None when there is no such action.

    The args are checked first (`ActionError` 422), then that the Session has
    reminders at all (404 `schedule_not_installed`).
    """
    run = _parsed(name, args)
    if run is None:
        return None
    if ledger is None:
        raise ActionError.not_found(
            f"session {session_id} has no reminders to {name}: the schedule plugin runs in "
            "root Sessions made live after it loaded",
            code="schedule_not_installed",
        )
    return _refusing(run, ledger)


def _parsed(name: str, args: dict[str, JsonValue]) -> Run | None:
    if name == "snooze" and "dispatchSeq" in args:
        delivered = SnoozeDeliveredArguments.parse(args)
        return lambda ledger: ledger.snooze_delivered(delivered.dispatch_seq, delivered.seconds)
    if name == "snooze":
        snooze = SnoozeArguments.parse(args)
        return lambda ledger: _view(
            ledger.snooze(snooze.id, snooze.seconds, revision=snooze.revision)
        )
    if name == "create":
        created = CreateActionArguments.parse(args)
        return lambda ledger: _created(ledger, created)
    if name not in ACTIONS:
        return None
    target = ReminderArguments.parse(args)
    if name == "delete":
        return lambda ledger: _deleted(ledger, target)
    paused = name == "pause"
    return lambda ledger: _view(ledger.set_paused(target.id, paused, revision=target.revision))


async def _refusing(run: Run, ledger: ScheduleLedger) -> JsonLike:
    try:
        return await run(ledger)
    except ToolError as error:
        raise ActionError(error.code, error.message, status=_STATUS.get(error.code, 500)) from None


async def _view(pending: Awaitable[dict[str, JsonValue]]) -> JsonLike:
    return {"reminder": await pending}


async def _created(ledger: ScheduleLedger, args: CreateArguments) -> JsonLike:
    # Shape errors (invalid_rule, invalid_prompt) are ToolErrors: `_refusing` makes them 422.
    return {"reminder": await ledger.create(create_request(args))}


async def _deleted(ledger: ScheduleLedger, target: ReminderArguments) -> JsonLike:
    result = await ledger.delete(target.id, revision=target.revision)
    if result["deleted"] is not True:
        raise ToolError(
            "schedule_not_found",
            f"{target.id} is not an active reminder of this Session (unknown, deleted or "
            "finished); nothing was changed",
        )
    return result
