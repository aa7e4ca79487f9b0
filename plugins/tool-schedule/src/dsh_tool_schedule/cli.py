"""`dsh reminders list|add|pause|resume|snooze|delete`: reminders on the command line.

    dsh reminders list [--session ID] [--data-dir DIR] [--store URL] [--time-zone ZONE] [--json]

The command exists when an overlay enables this plugin: `--overlay PATH`
before or after the command words, `$DSH_OVERLAY`, or the overlay the data
dir remembers from the last `dsh web` that ran on it. The changes (`add`,
`pause`, …) are made by the running `dsh web` (`cli_changes`). `list` reads stored logs
only (`dsh.CommandContext.stored_log`): it starts no agent, takes no lock and
writes nothing, so it works while `dsh web` runs (a live Session shows what
its storage confirmed).

The table has one row per active reminder: SESSION, ID, PROMPT (on one line,
clipped to `PROMPT_WIDTH` characters), RULE (in words), NEXT (the next
occurrence in the local zone: the machine's, or `--time-zone`) and STATE
(`scheduled`, `overdue` or `paused` as of now; `not delivered` for every
reminder of a rejected log). Sessions without reminders have no rows; with
none at all, one line on stderr says so. `--json` prints
`{"sessions": [{"id", "reminders": [view, ...], "error"?}]}` instead — each
Session's plugin state (the views of `schedule_list`, planned at now) — for
the Sessions that have reminders or a rejected log.

Prompts, rules and messages are shown as text: a control character a
terminal would obey (an escape sequence, a bidi control) is printed as an
escape such as `\u001b` (`dsh.visible`); `--json` prints them exactly.

A rejected log is named on stderr (`session ID: the schedule log is invalid
at seq N: …`). A Session that cannot be read is named on stderr too and the
others are still listed; the exit code is then 1. An unknown `--session` is
exit 1, a malformed id or zone is a usage error (exit 2).
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime, tzinfo
from typing import Any, Final

from pydantic import JsonValue

from dsh import (
    CommandContext,
    RegisterCommand,
    SessionNotFound,
    StorageError,
    add_store_options,
    validate_session_id,
    visible,
)

from .cli_changes import configure_changes, run_change
from .state import session_state
from .zones import load_zone

__all__ = ["COMMAND", "PROMPT_WIDTH", "RemindersCommand", "register_commands"]

COMMAND: Final = "reminders"
PROMPT_WIDTH: Final = 40
HEADER: Final = ("SESSION", "ID", "PROMPT", "RULE", "NEXT", "STATE")


def register_commands(register: RegisterCommand, *, grace_ms: int) -> None:
    """Register `dsh reminders` (the plugin's `dsh_cli_commands`)."""
    command = RemindersCommand(grace_ms)
    register(
        COMMAND,
        command.run,
        help="list, add, pause, resume, snooze and delete the reminders of Sessions",
        configure=command.configure,
    )


class RemindersCommand:
    """`dsh reminders ACTION`: `list` reads stored logs, the others ask `dsh web`."""

    def __init__(self, grace_ms: int) -> None:
        self.grace_ms = grace_ms

    def configure(self, parser: argparse.ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="reminders_action", metavar="ACTION", required=True)
        listing = actions.add_parser(
            "list",
            help="list the active reminders of stored Sessions",
            description="List the active reminders of stored Sessions (reads only: no agent "
            "starts, nothing is written).",
        )
        listing.add_argument("--session", type=_session_id, metavar="ID", help="only this Session")
        listing.add_argument(
            "--time-zone",
            type=_zone,
            metavar="ZONE",
            help="show times in this IANA zone (default: this machine's)",
        )
        listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
        add_store_options(listing)
        configure_changes(actions, _session_id)

    async def run(self, args: argparse.Namespace, context: CommandContext) -> int:
        if args.reminders_action != "list":
            return await run_change(args, context, _show)
        now_ms = time.time_ns() // 1_000_000
        ids: list[str] = [args.session] if args.session else await context.session_ids()
        states: list[tuple[str, dict[str, JsonValue]]] = []
        failed = False
        for session_id in ids:
            try:
                log = await context.stored_log(session_id)
            except SessionNotFound:
                context.note(f"dsh: error: no session {session_id!r} in {context.store_name}")
                return 1
            except (StorageError, OSError) as error:
                context.note(f"dsh: session {session_id} cannot be read: {visible(str(error))}")
                failed = True
                continue
            state = session_state(log, grace_ms=self.grace_ms, now_ms=now_ms)
            if state["reminders"] or "error" in state or args.session:
                states.append((session_id, state))
        for session_id, state in states:
            rejected = state.get("error")
            if isinstance(rejected, dict):
                context.note(f"dsh: session {session_id}: {visible(str(rejected['message']))}")
        if args.json:
            sessions: list[JsonValue] = [{"id": sid, **state} for sid, state in states]
            context.exact(json.dumps({"sessions": sessions}, ensure_ascii=False, indent=2))
        elif not self._table(context, states, args.time_zone) and not failed:
            context.note(f"no reminders in {context.store_name}")
        return 1 if failed else 0

    def _table(
        self,
        context: CommandContext,
        states: list[tuple[str, dict[str, JsonValue]]],
        zone: tzinfo | None,
    ) -> bool:
        """Write the table; False when it has no rows (nothing is written then)."""
        rows = [
            _row(session_id, view, zone, rejected="error" in state)
            for session_id, state in states
            for view in _views(state)
        ]
        context.table(HEADER, rows)
        return bool(rows)


def _show(context: CommandContext, session_id: str, view: dict[str, Any]) -> None:
    """One reminder as `list` shows it, its NEXT in the reminder's own zone."""
    zone = load_zone(str(view["timeZone"]))
    context.table(HEADER, [_row(session_id, view, zone, rejected=False)])


def _views(state: dict[str, JsonValue]) -> list[dict[str, Any]]:
    reminders = state["reminders"]
    assert isinstance(reminders, list)
    return [view for view in reminders if isinstance(view, dict)]


def _row(
    session_id: str, view: dict[str, Any], zone: tzinfo | None, *, rejected: bool
) -> list[str]:
    return [
        session_id,
        str(view["id"]),
        clip(str(view["prompt"])),
        str(view["ruleText"]),
        local_time(view["nextAt"], zone),
        "not delivered" if rejected else str(view["state"]),
    ]


def clip(text: str, width: int = PROMPT_WIDTH) -> str:
    """`text` on one line, at most `width` characters (an ellipsis marks a cut)."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def local_time(next_at: str | None, zone: tzinfo | None) -> str:
    """`…Z` as `YYYY-MM-DD HH:MM TZ` in `zone` (None: this machine's zone); `-` for None."""
    if next_at is None:
        return "-"
    moment = datetime.fromisoformat(next_at).astimezone(UTC)
    local = moment.astimezone(zone) if zone is not None else moment.astimezone()
    return local.strftime("%Y-%m-%d %H:%M %Z").rstrip()


def _session_id(value: str) -> str:
    try:
        return validate_session_id(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def _zone(value: str) -> tzinfo:
    try:
        return load_zone(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error
